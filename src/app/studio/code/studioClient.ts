/** The page's handle on the code worker (runtime/codeEnv/studioWorker.ts): made on first use, never before Run. */
import { wrap, type Remote } from 'comlink';
import type { CodeStudioApi } from '../../../runtime/codeEnv/studioWorker.ts';

let api: Remote<CodeStudioApi> | null = null;

export function codeStudio(): Remote<CodeStudioApi> {
  if (api === null) {
    api = wrap<CodeStudioApi>(new Worker(new URL('../../../runtime/codeEnv/studioWorker.ts', import.meta.url), { type: 'module', name: 'code-env' }));
  }
  return api;
}

/** A worker error's message (comlink passes Error name and message across). */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
