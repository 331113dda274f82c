/**
 * Starting the helper thread an env link needs (remote envs' network thread), on either platform:
 * a module Web Worker in the browser by default; Node entry points swap in worker_threads
 * (envLinks.node.ts). The thread replies to its first message once it serves; the returned
 * promise settles then. A starter spawns synchronously and throws synchronously when it cannot,
 * so a caller can record the thread before awaiting it.
 */

export interface LinkThreadSpec {
  /** Who the thread is, for errors ('remote envs: the network thread'). */
  name: string;
  /** The browser form: a module Worker constructed where its URL is written, so the bundler finds its entry. */
  web: () => Worker;
  /** The Node form: the thread's entry module (a bootstrap .mjs that loads the TypeScript entry). */
  node: () => URL;
  /** The first message (structured-cloneable); the thread replies once it serves. */
  init: unknown;
}

/** Spawns the thread for `spec`, posts its first message, and resolves on its reply. */
export type LinkThreadStarter = (spec: LinkThreadSpec) => Promise<void>;

function startWebThread(spec: LinkThreadSpec): Promise<void> {
  if (typeof Worker === 'undefined') throw new Error(`${spec.name}: no Worker in this runtime (Node entry points import src/runtime/envLinks.node.ts first)`);
  const worker = spec.web();
  const ready = new Promise<void>((resolve, reject) => {
    worker.addEventListener('message', () => resolve(), { once: true });
    worker.addEventListener('error', (e) => reject(new Error(`${spec.name} failed to start: ${e.message || 'script error'}`)));
  });
  worker.postMessage(spec.init);
  return ready;
}

let starter: LinkThreadStarter = startWebThread;

/** How this platform starts link threads (envLinks.node.ts sets worker_threads). */
export function useLinkThreadStarter(start: LinkThreadStarter): void {
  starter = start;
}

/** Starts a link thread with this platform's starter. */
export function startLinkThread(spec: LinkThreadSpec): Promise<void> {
  return starter(spec);
}
