/** An Engine wrapper that runs its sessions' calls one at a time, for an in-thread pool sharing a thread with the learner. */
import type { Engine } from './types.ts';

/**
 * An engine whose sessions run one call at a time. onnxruntime-web's WASM backend is not
 * reentrant: two `run`s in flight in one thread (an in-thread rollout interleaved with a train
 * step at their awaits) corrupt each other ("input name cannot be empty"). Async scheduling
 * with an in-thread pool therefore shares one lock between the pool and the learner; workers
 * have their own WASM instance and need none. (Better still: one lock per ORT module inside
 * the runtime's ortEngine, so that separately loaded engines on one thread also share it.)
 */
export function serializeEngine(engine: Engine): Engine {
  // One lock per engine object: trainers sharing an engine share its WASM instance.
  const known = serialized.get(engine);
  if (known) return known;
  const out = lockedEngine(engine);
  serialized.set(engine, out);
  serialized.set(out, out);
  return out;
}

const serialized = new WeakMap<Engine, Engine>();

function lockedEngine(engine: Engine): Engine {
  let tail: Promise<unknown> = Promise.resolve();
  const locked = <T>(f: () => Promise<T>): Promise<T> => {
    const run = tail.then(f);
    tail = run.catch(() => undefined);
    return run;
  };
  return {
    name: engine.name,
    async createLearner(model, opts, weights) {
      const l = await locked(() => engine.createLearner(model, opts, weights));
      return {
        get batch() {
          return l.batch;
        },
        get hyper() {
          return l.hyper;
        },
        step: (batch) => locked(() => l.step(batch)),
        getWeights: () => locked(() => l.getWeights()),
        setWeights: (w, reset) => l.setWeights(w, reset),
        exportState: l.exportState ? () => locked(() => l.exportState!()) : undefined,
        importState: l.importState ? (st) => l.importState!(st) : undefined,
        release: () => locked(() => l.release()),
      };
    },
    async createPolicy(model, batch, weights) {
      const p = await locked(() => engine.createPolicy(model, batch, weights));
      return {
        batch: p.batch,
        get version() {
          return p.version;
        },
        set version(v: number) {
          p.version = v;
        },
        setWeights: (w, v) => p.setWeights(w, v),
        run: (inputs) => locked(() => p.run(inputs)),
        release: () => locked(() => p.release()),
      };
    },
    // Token decoders are created under the lock but not serialized per call (no step pool uses them).
    createDecoder: (...args) => locked(() => engine.createDecoder(...args)),
  };
}
