/** Remote envs in Node: the network thread is a worker_thread. Node entry points that may train remote envs import this first. */
import { Worker } from 'node:worker_threads';
import { BRIDGE_BYTES } from './syncBridge.ts';
import { useNetworkThread } from './link.ts';

useNetworkThread(() => {
  const buffer = new SharedArrayBuffer(BRIDGE_BYTES);
  const worker = new Worker(new URL('./ioThread.node.mjs', import.meta.url));
  // The process may exit while the thread waits for work; an env's call waits on it, not the process.
  worker.unref();
  const ready = new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', (e: Error) => reject(new Error(`remote envs: the network thread failed: ${e.message}`)));
  });
  worker.postMessage({ buffer });
  return { buffer, ready };
});

export { ensureRemoteEnvs } from './link.ts';
