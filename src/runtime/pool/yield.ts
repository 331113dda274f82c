/**
 * Give queued events (a `setWeights` message) a chance to run between lockstep steps of a
 * rollout in a worker. Node: setImmediate runs after the poll phase, where port messages are
 * dispatched. Browser: a MessageChannel round trip is one task, queued behind pending messages.
 * Both cost microseconds, against ~0.1–1 ms per batched inference call.
 */
export function yieldToEvents(): Promise<void> {
  const g = globalThis as { setImmediate?: (cb: () => void) => unknown };
  if (typeof g.setImmediate === 'function') return new Promise((resolve) => g.setImmediate!(resolve));
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => {
      ch.port1.close();
      resolve();
    };
    ch.port2.postMessage(null);
  });
}
