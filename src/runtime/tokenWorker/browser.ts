/** A token rollout worker as a module Web Worker (Vite bundles the entry from this `new URL` pattern). */
import type { TokenSourceFactory } from '../../core/rollout/tokenSource.ts';
import { remoteTokenSource, type TokenWorkerHandle } from './source.ts';
import { DeathSignal } from '../workerDeath.ts';

function spawn(): TokenWorkerHandle {
  const name = 'token rollout worker';
  const worker = new Worker(new URL('./worker.browser.ts', import.meta.url), { type: 'module', name: 'token-rollout' });
  const death = new DeathSignal();
  worker.addEventListener('error', (e) => death.fail(new Error(`${name} crashed: ${e.message || 'script error (see the console)'}`)));
  worker.addEventListener('messageerror', () => death.fail(new Error(`${name}: a message could not be deserialized`)));
  return {
    endpoint: worker,
    death,
    name,
    terminate() {
      worker.terminate();
      death.fail(new Error(`${name} was terminated`));
      return Promise.resolve();
    },
  };
}

export const browserTokenWorker: TokenSourceFactory = (init) => remoteTokenSource(spawn(), init);
