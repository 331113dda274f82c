/**
 * Code envs in this thread: `await loadCodeEnvs()` once (it loads QuickJS's WebAssembly and
 * registers `code/custom`), then `makeEnv('code/custom', { code })` works synchronously like
 * any env. Every place that makes envs from a config (CLI, training and rollout workers, the
 * server) calls `ensureCodeEnvs(envId)` first. Node entry points import `./node.ts` first, which
 * adds the V8 sandbox (nodeVm.ts) as the fast engine: grid modules then train, play and serve
 * at V8 speed, and QuickJS runs the checks and every other module.
 */
import { CODE_ENV_ID, installCodeEnvEngine, type FastCodeEnvEngine } from '../../core/envs/code/codeEnv.ts';
import { loadQuickJs, quickJsEngine, type CodeEnvSandboxOptions } from './quickjs.ts';
import { ensureEnvLink } from '../envLinks.ts';

let loaded: Promise<void> | null = null;
let fastEngine: ((options: CodeEnvSandboxOptions) => FastCodeEnvEngine) | null = null;

/** Adds a faster sandbox for the modules it accepts (call before loadCodeEnvs; Node: ./node.ts). */
export function useFastCodeEnvEngine(make: (options: CodeEnvSandboxOptions) => FastCodeEnvEngine): void {
  if (loaded !== null) throw new Error('useFastCodeEnvEngine: call it before loadCodeEnvs()');
  fastEngine = make;
}

/** Sandbox options this thread's entry point set (Node: CODE_ENV_CALL_TIMEOUT_MS, ./node.ts); a call's own options win. */
let defaults: CodeEnvSandboxOptions = {};

/** Sets the sandbox options loadCodeEnvs uses (call before loadCodeEnvs). */
export function setCodeEnvDefaults(options: CodeEnvSandboxOptions): void {
  if (loaded !== null) throw new Error('setCodeEnvDefaults: call it before loadCodeEnvs()');
  defaults = { ...options };
}

/** Loads the sandbox and registers `code/custom` in this thread (once). */
export function loadCodeEnvs(options: CodeEnvSandboxOptions = {}): Promise<void> {
  const o = { ...defaults, ...options };
  loaded ??= loadQuickJs().then(() => installCodeEnvEngine(quickJsEngine(o), fastEngine?.(o) ?? null));
  return loaded;
}

/**
 * Loads the sandbox when `envId` is a code env, and starts this thread's link for its family when
 * the family has one (envLinks.ts; the same moment: before anything plays it); nothing otherwise.
 */
export async function ensureCodeEnvs(envId: string): Promise<void> {
  if (envId === CODE_ENV_ID || envId.startsWith('code/')) await loadCodeEnvs();
  await ensureEnvLink(envId);
}

/** Loads the sandbox when `config` (or any of its stages) trains on a code env: before anything builds its model or env in this thread. */
export async function ensureCodeEnvsFor(config: { env: { id: string }; stages?: readonly { env?: { id: string } }[] }): Promise<void> {
  for (const id of [config.env.id, ...(config.stages ?? []).map((st) => st.env?.id ?? '')]) await ensureCodeEnvs(id);
}

export { CODE_ENV_ID } from '../../core/envs/code/codeEnv.ts';
export { wrapModule } from './quickjs.ts';
