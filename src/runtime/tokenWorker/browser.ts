/** A token rollout worker as a module Web Worker (Vite bundles the entry from this `new URL` pattern). */
import type { TokenSourceFactory } from '../../core/trainer/asyncTokenTrainer.ts';
import { remoteTokenSource, type TokenWorkerHandle } from './source.ts';

function spawn(): TokenWorkerHandle {
  const worker = new Worker(new URL('./worker.browser.ts', import.meta.url), { type: 'module', name: 'token-rollout' });
  let fail: (e: Error) => void = () => undefined;
  const died = new Promise<never>((_, reject) => (fail = reject));
  worker.addEventListener('error', (e) => fail(new Error(`token rollout worker crashed: ${e.message || 'script error (see the console)'}`)));
  worker.addEventListener('messageerror', () => fail(new Error('token rollout worker: a message could not be deserialized')));
  return {
    endpoint: worker,
    died,
    terminate() {
      worker.terminate();
      fail(new Error('token rollout worker was terminated'));
      return Promise.resolve();
    },
  };
}

export const browserTokenWorker: TokenSourceFactory = (init) => remoteTokenSource(spawn(), init);
