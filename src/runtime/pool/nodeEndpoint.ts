/**
 * comlink Endpoint over a node:worker_threads port (the same adapter as comlink's
 * node-adapter.mjs, which ships without types TypeScript can resolve for an .mjs path).
 */
import type { Endpoint } from 'comlink';
import type { MessagePort, Worker } from 'node:worker_threads';

type Listener = EventListenerOrEventListenerObject;

export function nodeEndpoint(port: MessagePort | Worker): Endpoint {
  const wrapped = new WeakMap<Listener, (data: unknown) => void>();
  return {
    postMessage: (message: unknown, transfer?: Transferable[]) => port.postMessage(message, transfer as never),
    addEventListener: (_type: string, listener: Listener) => {
      const l = (data: unknown) => {
        const ev = { data } as MessageEvent;
        if (typeof listener === 'function') listener(ev);
        else listener.handleEvent(ev);
      };
      port.on('message', l);
      wrapped.set(listener, l);
    },
    removeEventListener: (_type: string, listener: Listener) => {
      const l = wrapped.get(listener);
      if (!l) return;
      port.off('message', l);
      wrapped.delete(listener);
    },
  };
}
