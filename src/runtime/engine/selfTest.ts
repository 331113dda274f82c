/**
 * Device check: does this browser run our graphs, where, how fast, and do backends agree?
 *
 *   placement  every node of the policy and train-step graphs on the WebGPU EP (none on CPU),
 *              read from ORT's verbose "Node(s) placed on [...]" session log
 *   agreement  one train step on WebGPU vs WASM from the same weights and batch: max |Δ| over
 *              the metrics and updated parameters (target ≤ 1e-4)
 *   speed      median train-step time per backend
 *
 * Used by the Device check page (workshop hosts run it on a laptop before a session) and by the
 * Chromium e2e tests.
 */
import { buildTrainStep, type TrainStepGraph } from '../../core/update/trainStep.ts';
import { buildPolicyGraph } from '../../core/models/policyGraph.ts';
import type { Graph } from '../../core/graph/builder.ts';
import { makePresetModel } from '../../core/models/presets.ts';
import { syntheticBatch } from '../../core/update/syntheticBatch.ts';
import { TransformerPolicy } from '../../core/models/transformer.ts';
import { initWeights, type PolicyModel } from '../../core/models/types.ts';
import { TrainSession, type OrtModule } from '../ort/session.ts';
import { runSessionCheck } from '../ort/sessionCheck.ts';
import { loadWebOrt } from './web.ts';

export interface Placement {
  graph: string;
  /** Node count per execution provider, e.g. { WebGpuExecutionProvider: 120 }. */
  counts: Record<string, number>;
  /** Op types (and node names) that landed on the CPU EP: each is a silent slow path. */
  cpuNodes: string[];
}

export interface Agreement {
  model: string;
  /** Largest absolute difference over metrics, log-probs and updated parameters. */
  maxAbsDiff: number;
  /** Where it was largest. */
  worst: string;
}

export interface SelfTestReport {
  webgpu: boolean;
  placements: Placement[];
  agreements: Agreement[];
  /** Median ms per train step, by model and backend. */
  timings: { model: string; backend: 'webgpu' | 'wasm'; ms: number }[];
  /**
   * The session layer with GPU-resident state vs WASM over three chained steps, the NaN guard
   * on the GPU, and KV-cache decoding (see src/runtime/ort/sessionCheck.ts); WebGPU only.
   */
  session?: Record<string, number | boolean | string>;
  errors: string[];
}

/** Parses ORT's verbose placement log lines into counts and the CPU node list. */
export function parsePlacement(graph: string, lines: readonly string[]): Placement {
  const counts: Record<string, number> = {};
  const cpuNodes: string[] = [];
  let current: string | null = null;
  for (const line of lines) {
    // ORT prints 'All nodes placed on [EP]' when one EP takes everything, else one 'Node(s) placed on [EP]' block per EP.
    const head = /(?:All nodes|Node\(s\)) placed on \[(\w+)\]\. Number of nodes: (\d+)/.exec(line);
    if (head) {
      current = head[1];
      counts[current] = (counts[current] ?? 0) + Number(head[2]);
      continue;
    }
    const node = /VerifyEachNodeIsAssignedToAnEp\]\s{2,}(\S+) \(([^)]*)\)/.exec(line);
    if (node && current === 'CPUExecutionProvider') cpuNodes.push(`${node[1]} (${node[2]})`);
  }
  return { graph, counts, cpuNodes };
}

/**
 * ORT's WASM module binds console.log/console.error once, when it first initialises, so a
 * temporary swap of `console.*` during one session creation catches nothing. Install forwarding
 * wrappers before ORT loads; they pass through to the real console unless a collector is active.
 */
const collector: { lines: string[] | null } = { lines: null };
let consoleHooked = false;
function hookConsole(): void {
  if (consoleHooked) return;
  consoleHooked = true;
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const orig = console[level].bind(console);
    console[level] = (...args: unknown[]) => {
      const text = args.map(String).join(' ');
      if (collector.lines) collector.lines.push(text);
      // ORT's default logger stays at the verbose level it was initialised with; drop its
      // verbose/info chatter (V:/I:) outside a capture, keep its warnings and errors.
      else if (!/\[[VI]:onnxruntime/.test(text)) orig(...args);
    };
  }
}

/** Creates a session with verbose logging and captures what ORT prints about placement. */
async function sessionPlacement(ort: OrtModule, graph: Graph, name: string): Promise<Placement> {
  const lines: string[] = [];
  collector.lines = lines;
  try {
    // Verbose on this session's logger only: the env-wide logger at verbose would also dump
    // every WebGPU shader for the rest of the page's life.
    const s = await ort.InferenceSession.create(graph.toOnnx(), { executionProviders: ['webgpu'], logSeverityLevel: 0, logVerbosityLevel: 0 });
    await s.release();
  } finally {
    collector.lines = null;
  }
  const p = parsePlacement(name, lines);
  if (Object.keys(p.counts).length === 0) throw new Error(`no placement log for ${name} (${lines.length} log lines captured)`);
  return p;
}

/** The models the check runs, by id (the ids `only` picks from). */
export const SELF_TEST_MODELS = ['mlp-76k', 'transformer-tiny'] as const;
export type SelfTestModel = (typeof SELF_TEST_MODELS)[number];

function models(only: readonly SelfTestModel[]): { id: string; model: PolicyModel; batch: number }[] {
  const batches: Record<SelfTestModel, number> = { 'mlp-76k': 64, 'transformer-tiny': 8 };
  return SELF_TEST_MODELS.filter((id) => only.includes(id)).map((id) => ({ id, model: makePresetModel(id), batch: batches[id] }));
}

async function readAll(session: TrainSession, spec: TrainStepGraph): Promise<Record<string, Float32Array>> {
  const w = await session.getWeights();
  const out: Record<string, Float32Array> = {};
  for (const s of spec.state) if (s.kind === 'param') out[`param ${s.input}`] = w[s.input];
  return out;
}

/**
 * `only` limits the check to some models (default: all); the session-layer check, which drives
 * both, runs only when all are checked.
 */
export async function runSelfTest(options: { timingRuns?: number; only?: readonly SelfTestModel[] } = {}): Promise<SelfTestReport> {
  const report: SelfTestReport = { webgpu: false, placements: [], agreements: [], timings: [], errors: [] };
  const gpu = (globalThis.navigator as Navigator & { gpu?: { requestAdapter(): Promise<unknown> } } | undefined)?.gpu;
  report.webgpu = !!gpu && !!(await gpu.requestAdapter().catch(() => null));
  hookConsole();
  const ort = (await loadWebOrt(report.webgpu ? 'webgpu' : 'wasm')) as unknown as OrtModule;
  const runs = options.timingRuns ?? 5;
  const only = options.only ?? SELF_TEST_MODELS;

  for (const { id, model, batch } of models(only)) {
    const spec = buildTrainStep(model, { batch, loss: { kind: 'policy-gradient', useReference: true, entropyCoef: 0.01 } });
    if (report.webgpu) {
      try {
        report.placements.push(await sessionPlacement(ort, buildPolicyGraph(model, batch), `${id} policy`));
        if (model instanceof TransformerPolicy) report.placements.push(await sessionPlacement(ort, model.buildDecodeGraph(batch, 1), `${id} KV-cache decode`));
        report.placements.push(await sessionPlacement(ort, spec.graph, `${id} train step`));
      } catch (e) {
        report.errors.push(`${id}: placement check failed: ${(e as Error).message}`);
      }
    }
    const weights = initWeights(model, 7);
    const batchData = syntheticBatch(spec, 11);
    const results: Partial<Record<'webgpu' | 'wasm', Record<string, Float32Array>>> = {};
    for (const backend of report.webgpu ? (['webgpu', 'wasm'] as const) : (['wasm'] as const)) {
      try {
        const session = await TrainSession.create(ort, spec, weights, {
          sessionOptions: { executionProviders: [backend] },
          stateLocation: backend === 'webgpu' ? 'gpu-buffer' : 'cpu',
        });
        const step = await session.step(batchData);
        const res: Record<string, Float32Array> = { logprobs: step.logprobs, ...(await readAll(session, spec)) };
        for (const [k, v] of Object.entries(step.metrics)) res[`metric ${k}`] = Float32Array.of(v);
        results[backend] = res;
        const times: number[] = [];
        for (let r = 0; r < runs; r++) {
          const t0 = performance.now();
          await session.step(batchData);
          times.push(performance.now() - t0);
        }
        times.sort((a, b) => a - b);
        report.timings.push({ model: id, backend, ms: times[Math.floor(times.length / 2)] });
        await session.release();
      } catch (e) {
        report.errors.push(`${id} on ${backend}: ${(e as Error).message}`);
      }
    }
    if (results.webgpu && results.wasm) {
      let max = 0;
      let worst = '';
      for (const [k, a] of Object.entries(results.wasm)) {
        const b = results.webgpu[k];
        if (!b || b.length !== a.length) {
          report.errors.push(`${id}: output ${k} missing or mis-sized on WebGPU`);
          continue;
        }
        for (let i = 0; i < a.length; i++) {
          const d = Math.abs(a[i] - b[i]);
          if (!(d <= max)) {
            max = d;
            worst = `${k}[${i}]`;
          }
        }
      }
      report.agreements.push({ model: id, maxAbsDiff: max, worst });
    }
  }
  if (report.webgpu && SELF_TEST_MODELS.every((id) => only.includes(id))) {
    try {
      report.session = await runSessionCheck(ort);
    } catch (e) {
      report.errors.push(`session check: ${(e as Error).message}`);
    }
  }
  return report;
}
