/**
 * Imitation warm start (behaviour cloning) for the grid MLP: the env's expert (its shortest
 * solution from the full state, `expertAction`) plays fresh seeds, and each train step is the
 * cross-entropy of the MLP on the expert's actions at the observations it saw, encoded as the
 * rollout encodes them (`encodeStepObs`), so the policy starts where the token policies'
 * warm start puts them: near the expert, and that start becomes the KL reference.
 *
 * Expert data is unlimited (every seed is a new episode), so there are no epochs; the step's
 * rows are one train step of `rows` positions, filled from `batch` expert episodes (the surplus
 * dropped, the rest masked out).
 */
import type { Engine } from '../engine/types.ts';
import { makeEnv, type EnvKwargs } from '../envs/index.ts';
import { familyOf } from '../envs/families.ts';
import type { Env, StepObs } from '../envs/types.ts';
import type { MlpPolicy } from '../models/mlp.ts';
import type { Weights } from '../models/types.ts';
import { encodeStepObs } from '../rollout/features.ts';
import { imitationSeed, type ImitationReport } from './imitation.ts';

export interface GridImitationConfig {
  /** Env registry id (a one-agent grid env with an expert) and its kwargs. */
  env: { id: string; kwargs?: EnvKwargs };
  /** Train steps (each on fresh expert episodes). */
  steps: number;
  /** Expert episodes per step. */
  batch: number;
  /** Rows (positions) per train step: the run's rollout.learnerBatch. */
  rows: number;
  /** Adam learning rate at the first step; decays linearly to 0.1× by the last. */
  lr: number;
  /** Seed of the expert's episodes (distinct from the run's own seeds). */
  seed: number;
}

/** Cross-entropy steps on the expert's actions; returns the trained weights (the warm start and the KL reference). */
export async function trainGridImitation(
  engine: Engine,
  model: MlpPolicy,
  initial: Weights,
  cfg: GridImitationConfig,
  onStep?: (r: ImitationReport) => void | Promise<void>,
): Promise<{ weights: Weights; curve: ImitationReport[] }> {
  const env = makeEnv(cfg.env.id, cfg.env.kwargs) as Env<StepObs, number>;
  if (!familyOf(env.spec).stepPool || (env.spec.agents?.length ?? 1) > 1) throw new Error(`trainGridImitation: ${cfg.env.id} is not a one-agent grid env`);
  const D = model.config.obsDim;
  const B = cfg.rows;
  const learner = await engine.createLearner(model, { batch: B, loss: { kind: 'imitation', entropyCoef: 0 }, adam: { lr: cfg.lr, maxGradNorm: 1 } }, initial);
  const obs = new Float32Array(B * D);
  const actions = new Int32Array(B);
  const weights = new Float32Array(B);
  const mask = new Float32Array(B);
  const curve: ImitationReport[] = [];
  const t0 = performance.now();
  let waited = 0;
  try {
    for (let s = 0; s < cfg.steps; s++) {
      obs.fill(0);
      actions.fill(0);
      mask.fill(0);
      let n = 0;
      for (let k = 0; k < cfg.batch && n < B; k++) {
        let o = env.reset({ seed: imitationSeed(cfg.seed, s, k) }).obs;
        for (let a = env.expertAction(); a !== null && n < B; a = env.expertAction()) {
          encodeStepObs(o, obs, n * D);
          actions[n] = a;
          mask[n++] = 1;
          const r = env.step(a);
          if (r.terminated || r.truncated) break;
          o = r.obs;
        }
      }
      if (n === 0) throw new Error(`trainGridImitation: the expert of ${cfg.env.id} took no action from seed ${imitationSeed(cfg.seed, s, 0)}`);
      weights.fill(0);
      weights.fill(1 / n, 0, n);
      learner.hyper.lr = cfg.lr * (1 - 0.9 * (cfg.steps > 1 ? s / (cfg.steps - 1) : 0));
      const res = await learner.step({ obs, actions, weights, mask });
      const rep: ImitationReport = { step: s, ceLoss: res.metrics['imitation/ce_loss'], targetProb: res.metrics['imitation/target_prob_mean'], wallS: (performance.now() - t0 - waited) / 1000 };
      curve.push(rep);
      const w0 = performance.now();
      await onStep?.(rep);
      waited += performance.now() - w0;
    }
    return { weights: await learner.getWeights(), curve };
  } finally {
    await learner.release();
  }
}
