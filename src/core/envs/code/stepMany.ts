/**
 * Vector stepping for the rollout loops: `stepEnvs` / `resetEnvs` act on every env of one
 * lockstep step at once. Code envs whose sandbox can step many instances in one call
 * (`CodeEnvInstance.batch`, the V8 sandbox in Node) are grouped per sandbox and crossed into once
 * per group; every other env (built-in ones, QuickJS code envs) is stepped by its own `step()`
 * in index order, exactly as a plain loop would, so runs on built-in envs are unchanged.
 * Results come back in index order and are what `env.step` / `env.reset` would have returned.
 */
import type { Env, ResetResult, StepResult } from '../types.ts';
import { CodeEnv, type CodeEnvBatch } from './codeEnv.ts';

const batchOf = (env: Env): CodeEnvBatch | undefined => (env instanceof CodeEnv ? env.guest.batch : undefined);

/** Index lists of the envs that share one batching sandbox, by sandbox; null when none can batch. */
function groups(envs: readonly Env[]): Map<CodeEnvBatch, number[]> | null {
  let out: Map<CodeEnvBatch, number[]> | null = null;
  for (let k = 0; k < envs.length; k++) {
    const b = batchOf(envs[k]);
    if (b === undefined) continue;
    out ??= new Map();
    const g = out.get(b);
    if (g) g.push(k);
    else out.set(b, [k]);
  }
  return out;
}

/** `envs[k].step(actions[k])` for every k, batched where a sandbox allows. */
export function stepEnvs<O, A>(envs: readonly Env<O, A>[], actions: readonly A[]): StepResult<O>[] {
  const out = new Array<StepResult<O>>(envs.length);
  const g = groups(envs as readonly Env[]);
  for (let k = 0; k < envs.length; k++) if (g === null || batchOf(envs[k] as Env) === undefined) out[k] = envs[k].step(actions[k]);
  if (g === null) return out;
  for (const [batch, idx] of g) {
    const code = idx.map((k) => envs[k] as unknown as CodeEnv);
    idx.forEach((k, j) => code[j].checkAction(actions[k]));
    const raw = batch.stepMany(code.map((e) => e.guest), idx.map((k) => actions[k] as unknown as number));
    idx.forEach((k, j) => (out[k] = code[j].finishStep(raw[j], actions[k]) as StepResult<O>));
  }
  return out;
}

/** `envs[k].reset({ seed: seeds[k] })` for every k, batched where a sandbox allows. */
export function resetEnvs<O, A>(envs: readonly Env<O, A>[], seeds: readonly number[]): ResetResult<O>[] {
  const out = new Array<ResetResult<O>>(envs.length);
  const g = groups(envs as readonly Env[]);
  for (let k = 0; k < envs.length; k++) if (g === null || batchOf(envs[k] as Env) === undefined) out[k] = envs[k].reset({ seed: seeds[k] });
  if (g === null) return out;
  for (const [batch, idx] of g) {
    const code = idx.map((k) => envs[k] as unknown as CodeEnv);
    const raw = batch.resetMany(code.map((e) => e.guest), idx.map((k) => seeds[k]));
    idx.forEach((k, j) => (out[k] = code[j].finishReset(raw[j]) as ResetResult<O>));
  }
  return out;
}
