/**
 * Conformance check for the env contract (types.ts), run in tests on every registered env.
 * Returns a list of problems (empty = conformant); each names the seed and step.
 */
import { Rng } from '../util/rng.ts';
import { deepClone, firstDifference } from '../util/deep.ts';
import { sample, whyNotContained } from './spaces.ts';
import type { Env, StepResult } from './types.ts';

export interface CheckEnvOptions {
  /** Seeds to replay; each is played twice on two instances and compared. */
  seeds?: readonly number[];
  /** Share of actions taken from the expert (rest random), so episodes reach real endings. */
  expertShare?: number;
  /** Draws a random action; defaults to sampling the action space. */
  randomAction?: (env: Env, rng: Rng) => unknown;
}

interface Trace {
  obs: unknown[];
  steps: Omit<StepResult<unknown>, 'obs' | 'info'>[];
  /** Observations as returned (kept by reference, to detect later mutation). */
  returned: unknown[];
}

function play(env: Env, seed: number, opts: Required<Omit<CheckEnvOptions, 'seeds'>>, problems: string[]): Trace {
  const where = (t: number) => `${env.spec.id} seed ${seed} step ${t}`;
  const rng = new Rng(seed ^ 0x5eed);
  const first = env.reset({ seed });
  const trace: Trace = { obs: [deepClone(first.obs)], steps: [], returned: [first.obs] };
  const why0 = whyNotContained(env.spec.observationSpace, first.obs, 'obs');
  if (why0) problems.push(`${where(0)}: reset ${why0}`);
  const [lo, hi] = env.spec.rewardRange;
  for (let t = 1; t <= env.spec.maxSteps + 1; t++) {
    const expert = rng.random() < opts.expertShare ? env.expertAction() : null;
    const action = expert ?? opts.randomAction(env, rng);
    const r = env.step(action);
    trace.obs.push(deepClone(r.obs));
    trace.returned.push(r.obs);
    trace.steps.push({ reward: r.reward, terminated: r.terminated, truncated: r.truncated });
    const why = whyNotContained(env.spec.observationSpace, r.obs, 'obs');
    if (why) problems.push(`${where(t)}: ${why}`);
    if (!Number.isFinite(r.reward) || r.reward < lo || r.reward > hi) {
      problems.push(`${where(t)}: reward ${r.reward} outside declared range [${lo}, ${hi}]`);
    }
    if (typeof r.terminated !== 'boolean' || typeof r.truncated !== 'boolean') {
      problems.push(`${where(t)}: terminated/truncated must be booleans`);
    }
    if (r.truncated && r.terminated) problems.push(`${where(t)}: both terminated and truncated`);
    if (r.truncated && t !== env.spec.maxSteps) {
      problems.push(`${where(t)}: truncated at step ${t}, but maxSteps is ${env.spec.maxSteps}`);
    }
    if (!r.terminated && !r.truncated && t >= env.spec.maxSteps) {
      problems.push(`${where(t)}: episode ran to ${t} steps without truncation (maxSteps ${env.spec.maxSteps})`);
    }
    if (r.terminated && r.info.success === undefined) {
      problems.push(`${where(t)}: terminated without info.success`);
    }
    if (r.terminated || r.truncated) {
      let threw = false;
      try {
        env.step(action);
      } catch {
        threw = true;
      }
      if (!threw) problems.push(`${where(t)}: step after the episode ended did not throw`);
      if (env.expertAction() !== null) problems.push(`${where(t)}: expertAction after the end should be null`);
      break;
    }
  }
  return trace;
}

export function checkEnv(make: () => Env, options: CheckEnvOptions = {}): string[] {
  const problems: string[] = [];
  const opts = {
    expertShare: options.expertShare ?? 0.5,
    randomAction: options.randomAction ?? ((env: Env, rng: Rng) => sample(env.spec.actionSpace, rng)),
  };
  const seeds = options.seeds ?? [0, 1, 2, 7, 42, 1234];
  const a = make();
  const b = make();
  const { spec } = a;
  if (!(spec.maxSteps > 0)) problems.push(`${spec.id}: maxSteps must be positive`);
  if (!(spec.rewardRange[0] <= spec.rewardRange[1])) problems.push(`${spec.id}: empty reward range`);
  if (!spec.title || !spec.description) problems.push(`${spec.id}: spec needs a title and a description`);

  for (const seed of seeds) {
    const ta = play(a, seed, opts, problems);
    const tb = play(b, seed, opts, problems);
    const d = firstDifference({ obs: ta.obs, steps: ta.steps }, { obs: tb.obs, steps: tb.steps });
    if (d) problems.push(`${spec.id} seed ${seed}: two instances diverged at ${d}`);
    // Reusing the same instance with the same seed must replay the episode too.
    const tc = play(a, seed, opts, problems);
    const d2 = firstDifference({ obs: ta.obs, steps: ta.steps }, { obs: tc.obs, steps: tc.steps });
    if (d2) problems.push(`${spec.id} seed ${seed}: re-reset of one instance diverged at ${d2}`);
    // Observations handed out earlier must be untouched by everything since.
    for (let i = 0; i < ta.returned.length; i++) {
      const m = firstDifference(ta.obs[i], ta.returned[i]);
      if (m) {
        problems.push(`${spec.id} seed ${seed}: observation from step ${i} was mutated later (at ${m})`);
        break;
      }
    }
  }
  return problems;
}

/** Plays the expert from reset to the end; returns the final step and the step count. */
export function runExpert(env: Env, seed: number): { success: boolean; steps: number; totalReward: number } {
  env.reset({ seed });
  let totalReward = 0;
  for (let t = 1; t <= env.spec.maxSteps; t++) {
    const action = env.expertAction();
    if (action === null) return { success: false, steps: t - 1, totalReward };
    const r = env.step(action);
    totalReward += r.reward;
    if (r.terminated || r.truncated) return { success: r.info.success === true, steps: t, totalReward };
  }
  return { success: false, steps: env.spec.maxSteps, totalReward };
}
