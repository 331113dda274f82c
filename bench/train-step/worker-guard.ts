/**
 * Hides `globalThis.Worker` from jax-js.
 *
 * jax-js decides whether to use shared memory and a worker pool by testing for a global
 * `Worker`: once when its module is first evaluated (it creates the WASM backend on import) and
 * again at every kernel compile (lazily, at dispatch). Node has no global Worker, but
 * onnxruntime-web installs one when its first session is created. After that, jax-js either
 * compiles shared-memory kernels that fail to link against the non-shared memory it already
 * allocated (LinkError), or, if first imported after ORT, starts a worker pool (so it would no
 * longer be single-threaded, and then fails on ORT's Worker shim). So the jax-js module must be
 * imported, and every jax-js call made, inside `withoutWorker`. The benchmark awaits one
 * implementation at a time, so hiding the global across awaits affects no one else.
 */
export function withoutWorker<T>(f: () => T): T {
  const g = globalThis as { Worker?: unknown };
  const saved = g.Worker;
  if (saved === undefined) return f();
  delete g.Worker;
  try {
    const out = f();
    if (out instanceof Promise) return out.finally(() => (g.Worker = saved)) as T;
    g.Worker = saved;
    return out;
  } catch (e) {
    g.Worker = saved;
    throw e;
  }
}
