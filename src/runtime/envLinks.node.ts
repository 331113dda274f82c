/**
 * Env links in Node: link threads are worker_threads. Node entry points that may play envs of any
 * family import this first (the browser's Web Workers are linkThread.ts's default).
 */
import { Worker } from 'node:worker_threads';
import { useLinkThreadStarter } from './linkThread.ts';

useLinkThreadStarter((spec) => {
  const worker = new Worker(spec.node());
  // The process may exit while the thread waits for work; an env's call waits on it, not the process.
  worker.unref();
  const ready = new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', (e: Error) => reject(new Error(`${spec.name} failed: ${e.message}`)));
  });
  worker.postMessage(spec.init);
  return ready;
});

export { ensureEnvLink } from './envLinks.ts';
