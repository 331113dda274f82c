/**
 * Engines for browsers and workers. WebGPU uses onnxruntime-web's native WebGPU EP
 * (`onnxruntime-web/webgpu`), with parameters, Adam moments and KV caches kept as GPU buffers
 * between runs; WASM uses the plain build (`onnxruntime-web/wasm`), multi-threaded when the page is
 * cross-origin isolated.
 * Both modules are imported lazily, so a page pays only for the backend it uses.
 */
import type { Engine } from '../../core/engine/types.ts';
import { decide, type Candidate, type EngineDecision } from '../../core/engine/choose.ts';
import { measureEngine } from '../../core/engine/measure.ts';
import { probeShapeFor } from '../../core/engine/shape.ts';
import type { RunConfig } from '../../core/presets/schema.ts';
import type { OrtModule } from '../ort/session.ts';
import { ortEngine } from './ortEngine.ts';
import { Graph } from '../../core/graph/builder.ts';
import { mark } from '../marks.ts';

export type WebBackend = 'webgpu' | 'wasm';

type OrtWeb = typeof import('onnxruntime-web');

export interface WebEngineOptions {
  /** WASM threads; default: ORT's own choice (needs cross-origin isolation for > 1). */
  threads?: number;
  /** ORT log severity for new sessions: 0 verbose … 4 fatal. Default 3 (errors). */
  logSeverityLevel?: 0 | 1 | 2 | 3 | 4;
}

/**
 * The onnxruntime-web module for a backend (the WebGPU build also runs the WASM EP). Each entry
 * point loads its own WebAssembly file: `onnxruntime-web/wasm` the plain build
 * (ort-wasm-simd-threaded.wasm, 14.2 MB; 2.4 MB as Brotli), `onnxruntime-web/webgpu` the
 * asyncify build with the native WebGPU EP (26.8 MB). The package's default entry would load the
 * JSEP build (28.3 MB) even for WASM, so a WASM run downloads only the first.
 */
export async function loadWebOrt(kind: WebBackend): Promise<OrtWeb> {
  return kind === 'webgpu' ? ((await import('onnxruntime-web/webgpu')) as unknown as OrtWeb) : ((await import('onnxruntime-web/wasm')) as unknown as OrtWeb);
}

/** One tiny graph (y = x + 1), built once: creating a session on it loads the runtime. */
let tinyModel: Uint8Array | null = null;
/** Per ORT module: its runtime's start, shared by concurrent callers (ORT refuses a second concurrent init). */
const initialised = new WeakMap<object, Promise<void>>();

/**
 * Loads and starts `ort`'s WebAssembly runtime (fetch, compile, instantiate, thread workers),
 * which ORT otherwise does inside the first real session's creation: done here, the first run's
 * sessions build on a ready runtime, and the cost shows as its own step in the marks.
 */
function initRuntime(ort: OrtWeb): Promise<void> {
  let p = initialised.get(ort);
  if (!p) {
    if (!tinyModel) {
      const g = new Graph('runtime-init');
      g.output(g.add(g.input('x', [1]), 1), 'y');
      tinyModel = g.toOnnx();
    }
    const bytes = tinyModel;
    p = (async () => {
      const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], logSeverityLevel: 3 });
      await session.release();
    })();
    initialised.set(ort, p);
    // A failed start is not cached: the next caller tries again (and meets ORT's own error).
    p.catch(() => initialised.delete(ort));
  }
  return p;
}

export async function loadWebEngine(kind: WebBackend, options: WebEngineOptions = {}): Promise<Engine> {
  mark(`ort-load-begin:${kind}`);
  const ort = await loadWebOrt(kind);
  mark(`ort-imported:${kind}`);
  if (options.threads !== undefined) ort.env.wasm.numThreads = options.threads;
  const logSeverityLevel = options.logSeverityLevel ?? 3;
  await initRuntime(ort);
  // The thread count ORT runs with (1 where the page is not cross-origin isolated): bench/tab reads it.
  mark(`ort-runtime:${kind}`, { threads: Number(ort.env.wasm.numThreads ?? 1) });
  if (kind === 'webgpu') {
    return ortEngine(ort as unknown as OrtModule, 'ort-web-webgpu', {
      sessionOptions: { executionProviders: ['webgpu'], logSeverityLevel },
      stateLocation: 'gpu-buffer',
    });
  }
  return ortEngine(ort as unknown as OrtModule, 'ort-web-wasm', { sessionOptions: { executionProviders: ['wasm'], logSeverityLevel } });
}

export interface WebMeasureOptions {
  /** Backends to time, in order (WASM first: it always works and is the fallback). */
  backends: readonly WebBackend[];
  /** WASM threads the run would use (the WASM module is initialised with them). */
  threads: number;
  /** Wall-clock budget for all timings, ms, counted after the WASM runtime has loaded (the run needs it anyway). */
  budgetMs: number;
  /** The WebGPU adapter is a software one: never picked, and timed only with `timeSoftware`. */
  softwareAdapter: boolean;
  /** Time a software adapter too (the device check does; a run's start does not spend seconds on it). */
  timeSoftware?: boolean;
}

/** Timed samples of each kind when WASM is the only backend that could be picked (measureWebBackends). */
export const LONE_SAMPLES = 3;

/** Status-bar names of the two web backends with their settings. */
export function webBackendLabel(kind: WebBackend, threads: number, softwareAdapter: boolean): string {
  return kind === 'wasm' ? `WASM · ${threads} thread${threads === 1 ? '' : 's'}` : softwareAdapter ? 'WebGPU (software)' : 'WebGPU';
}

/**
 * Times the run's own model on each backend (core/engine) and decides. Runs in a worker
 * (the training worker, so the WASM runtime it warms is the one the run then uses). A backend
 * that has not finished when the budget runs out is reported as such and left to finish in the
 * background (its sessions are released when it does).
 */
export async function measureWebBackends(config: RunConfig, o: WebMeasureOptions): Promise<EngineDecision> {
  const shape = probeShapeFor(config);
  const wasm = o.backends.includes('wasm') ? await loadWebEngine('wasm', { threads: o.threads }) : null;
  const candidates: Candidate[] = [];
  const timed = o.backends.filter((k) => k === 'wasm' || !o.softwareAdapter || o.timeSoftware);
  // No other backend can be picked (no adapter, or a software one left untimed): the choice is
  // WASM whatever its figure, so it is timed with the fewest samples (its ms/step is shown), not
  // for the whole budget. The untimed first calls still warm the runtime the run then uses.
  const wasmOnly = timed.every((k) => k === 'wasm');
  const t0 = performance.now();
  for (const kind of o.backends) {
    const c: Candidate = { id: kind, label: webBackendLabel(kind, o.threads, o.softwareAdapter), timing: null, eligible: kind === 'wasm' || !o.softwareAdapter };
    candidates.push(c);
    if (kind === 'webgpu' && o.softwareAdapter) c.note = o.timeSoftware ? 'software adapter: never picked unless forced' : 'not timed (a software adapter is never picked unless forced)';
    const i = timed.indexOf(kind);
    if (i < 0) continue;
    const left = o.budgetMs - (performance.now() - t0);
    if (left <= 0) {
      c.note = `not measured: the ${(o.budgetMs / 1000).toFixed(1)} s budget was spent`;
      continue;
    }
    const share = left / (timed.length - i);
    try {
      if (kind === 'wasm') {
        // Always awaited (one sample at least): the run goes on to use this same WASM runtime.
        c.timing = await measureEngine(wasm!, shape, wasmOnly ? { budgetMs: 0, maxSamples: LONE_SAMPLES } : { budgetMs: share });
        continue;
      }
      const run = loadWebEngine(kind).then((engine) => measureEngine(engine, shape, { budgetMs: share }));
      // A GPU backend still compiling when the budget ends is abandoned, not awaited.
      const late = new Promise<'late'>((ok) => setTimeout(() => ok('late'), left + 50));
      const r = await Promise.race([run, late]);
      if (r === 'late') {
        c.note = `no result within the ${(o.budgetMs / 1000).toFixed(1)} s budget`;
        run.catch(() => undefined);
      } else c.timing = r;
    } catch (e) {
      c.note = `failed: ${(e as Error).message.split('\n')[0]}`;
    }
  }
  return decide(candidates, 'wasm');
}
