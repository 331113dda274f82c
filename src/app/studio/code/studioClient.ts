/** The page's handle on the code worker (runtime/codeEnv/studioWorker.ts): made on first use, never before Run. */
import { wrap, type Remote } from 'comlink';
import type { CodeStudioApi } from '../../../runtime/codeEnv/studioWorker.ts';

let worker: Worker | null = null;
let api: Remote<CodeStudioApi> | null = null;

export function codeStudio(): Remote<CodeStudioApi> {
  if (api === null) {
    worker = new Worker(new URL('../../../runtime/codeEnv/studioWorker.ts', import.meta.url), { type: 'module', name: 'code-env' });
    api = wrap<CodeStudioApi>(worker);
  }
  return api;
}

/** Ends the worker (a call stuck past every deadline): the next use starts a fresh one. */
export function restartCodeStudio(): void {
  worker?.terminate();
  worker = null;
  api = null;
}

/** A worker error's message (comlink passes Error name and message across). */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
