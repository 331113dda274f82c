/**
 * Engines for Node (CLI, tests, benchmarks). onnxruntime-web's WASM build runs in Node as is;
 * onnxruntime-node is the optional native engine (faster, same graphs).
 */
import type { Engine } from '../../core/engine/types.ts';
import { decide, type Candidate, type EngineDecision } from '../../core/engine/choose.ts';
import { measureEngine } from '../../core/engine/measure.ts';
import { probeShapeFor } from '../../core/engine/shape.ts';
import type { RunConfig } from '../../core/presets/schema.ts';
import type { OrtModule } from '../ort/session.ts';
import { ortEngine } from './ortEngine.ts';

export type NodeEngineName = 'ort-web-wasm' | 'ort-node';

export async function loadNodeEngine(name: NodeEngineName = 'ort-web-wasm', threads = 1): Promise<Engine> {
  if (name === 'ort-node') {
    let ort: OrtModule;
    try {
      ort = (await import('onnxruntime-node')) as unknown as OrtModule;
    } catch (e) {
      throw new Error(`engine 'ort-node' needs the optional package onnxruntime-node (${(e as Error).message}); use 'ort-web-wasm'`, { cause: e });
    }
    return ortEngine(ort, name, { sessionOptions: { intraOpNumThreads: threads, interOpNumThreads: 1 } });
  }
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  return ortEngine(ort as unknown as OrtModule, name);
}

/** What `--engine` accepts: an engine, or 'auto' (time both on the run's own model, keep the faster). */
export type NodeEngineChoice = NodeEngineName | 'auto';

const NODE_LABELS: Record<NodeEngineName, string> = { 'ort-web-wasm': 'ort-web WASM · 1 thread', 'ort-node': 'onnxruntime-node · 1 thread' };

/**
 * `--engine auto`: times a few train steps (and rollout calls, where rollouts share the engine)
 * of the run's own model on onnxruntime-web WASM and on onnxruntime-node, within `budgetMs` in
 * all, and returns the faster engine, loaded, with the figures. onnxruntime-node is optional:
 * when it cannot load, WASM is chosen and the reason says why.
 */
export async function chooseNodeEngine(config: RunConfig, budgetMs = 1500): Promise<{ engine: Engine; decision: EngineDecision }> {
  const shape = probeShapeFor(config);
  const engines = new Map<string, Engine>();
  const candidates: Candidate[] = [];
  const names: NodeEngineName[] = ['ort-web-wasm', 'ort-node'];
  const t0 = performance.now();
  for (const [i, name] of names.entries()) {
    const c: Candidate = { id: name, label: NODE_LABELS[name], timing: null, eligible: true };
    candidates.push(c);
    try {
      const engine = await loadNodeEngine(name);
      engines.set(name, engine);
      // Each engine gets an equal share of what is left.
      const left = budgetMs - (performance.now() - t0);
      c.timing = await measureEngine(engine, shape, { budgetMs: Math.max(1, left / (names.length - i)) });
    } catch (e) {
      c.note = `unavailable: ${(e as Error).message.split('\n')[0]}`;
    }
  }
  const decision = decide(candidates, 'ort-web-wasm');
  const engine = engines.get(decision.chosen) ?? (await loadNodeEngine('ort-web-wasm'));
  return { engine, decision };
}
