/**
 * The algorithm registry: every algorithm the playground trains, one descriptor each (one file
 * per algorithm in this folder). The config schema, the form, the run-config refusals, the
 * trainers and the dashboard read these instead of lists of names. To add an algorithm: write its
 * descriptor file and add it to ALGO_DESCRIPTORS below.
 */
import { EMA_BASELINE_INIT, type EmaBaselineState } from '../advantages.ts';
import type { Numbers } from '../stats.ts';
import { envFamily, playOf } from '../../envs/families.ts';
import { cispo } from './cispo.ts';
import { dapo } from './dapo.ts';
import { drgrpo } from './drgrpo.ts';
import { gigpo } from './gigpo.ts';
import { gmpo } from './gmpo.ts';
import { mtgrpo } from './mtgrpo.ts';
import { gspo } from './gspo.ts';
import { grpo } from './grpo.ts';
import { ppo } from './ppo.ts';
import { reinforce } from './reinforce.ts';
import { reinforcepp } from './reinforcepp.ts';
import { remax } from './remax.ts';
import { rloo } from './rloo.ts';
import { sapo } from './sapo.ts';
import type { AlgoDescriptor, AlgoSettings, AlgoTarget } from './types.ts';

/** Every algorithm, in the order the config's error messages list them. */
export const ALGO_DESCRIPTORS = [reinforce, grpo, drgrpo, rloo, ppo, cispo, gspo, gigpo, remax, reinforcepp, mtgrpo, sapo, gmpo, dapo] as const;

/** An algorithm's name (`algo.algo`). */
export type Algo = (typeof ALGO_DESCRIPTORS)[number]['name'];

export const ALGOS: readonly Algo[] = ALGO_DESCRIPTORS.map((d) => d.name);
/** Algorithms whose advantages compare episodes within a group started from the same seed. */
export const GROUP_ALGOS: readonly Algo[] = ALGO_DESCRIPTORS.filter((d) => d.group).map((d) => d.name);
/** Group algorithms that divide by the group's reward std (and default to it). */
export const STD_NORMALIZED: readonly Algo[] = ALGO_DESCRIPTORS.filter((d) => d.groupStd).map((d) => d.name);

const BY_NAME: ReadonlyMap<string, AlgoDescriptor<Algo>> = new Map(ALGO_DESCRIPTORS.map((d) => [d.name, d as AlgoDescriptor<Algo>]));

export function isAlgo(name: unknown): name is Algo {
  return typeof name === 'string' && BY_NAME.has(name);
}

/** The descriptor of an algorithm; throws on a name that is not registered. */
export function algoDescriptor(name: string): AlgoDescriptor<Algo> {
  const d = BY_NAME.get(name);
  if (!d) throw new RangeError(`unknown algorithm '${name}' (registered: ${ALGOS.join(', ')})`);
  return d;
}

/** Whether `name` is a registered group algorithm (false for unknown names, as in a draft config). */
export function isGroupAlgo(name: string): boolean {
  return BY_NAME.get(name)?.group === true;
}

/** The env family + policy pair of a run, as descriptors' refusals name it (the family's play of that policy declares it). */
export function algoTarget(family: string, modelKind: string): AlgoTarget {
  return playOf(envFamily(family), modelKind).target;
}

/**
 * Episode-level advantages of the configured algorithm (an `episode` estimator, or the episode
 * part of a step-groups or turn-credit one when `episodePart`). Other kinds need more than rewards: PPO's GAE
 * needs values, ReMax the greedy episodes' rewards.
 * @param rewards [n] episode rewards, group-major for group algorithms.
 * @param positions [n] policy positions per episode (steps or policy tokens); absent = 1 each.
 */
export function sequenceAdvantages(
  cfg: AlgoSettings & { algo: Algo },
  rewards: Numbers,
  ema: EmaBaselineState = EMA_BASELINE_INIT,
  positions?: Numbers,
  groupSize: number | readonly number[] = cfg.groupSize,
  episodePart = false,
): { advantages: Float64Array; ema: EmaBaselineState } {
  const a = algoDescriptor(cfg.algo).advantage;
  if (a.kind === 'episode') return a.estimate(cfg, { rewards, groupSize, positions, ema });
  if ((a.kind === 'step-groups' || a.kind === 'turn-credit') && episodePart) return a.episodePart(cfg, { rewards, groupSize, positions, ema });
  if (a.kind === 'gae') throw new RangeError(`sequenceAdvantages: ${cfg.algo} advantages are per step; use GAE (algos/gae.ts)`);
  if (a.kind === 'step-groups') throw new RangeError(`sequenceAdvantages: ${cfg.algo} advantages are per step; use gigpoAdvantages() (algos/stepGroups.ts)`);
  if (a.kind === 'turn-credit') throw new RangeError(`sequenceAdvantages: ${cfg.algo} advantages are per turn; use mtGrpoAdvantages() (algos/turnCredit.ts)`);
  throw new RangeError(`sequenceAdvantages: ${cfg.algo} needs each group's greedy reward; use remaxAdvantages() (algos/remax.ts)`);
}

/**
 * Group advantages for groups of unequal size (the adaptive rollout budget, algos/budget.ts):
 * each group compared only within itself (GRPO, Dr.GRPO, RLOO, CISPO, GSPO); batch-wide steps,
 * if the algorithm has any, over the whole batch. A group of one gets 0 (GRPO: no spread); RLOO
 * refuses it, as for equal groups.
 * @param rewards [Σ sizes] group-major; @param sizes episodes per group.
 */
export function unequalGroupAdvantages(cfg: AlgoSettings & { algo: Algo }, rewards: Numbers, sizes: readonly number[], positions?: Numbers): Float64Array {
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total !== rewards.length) throw new RangeError(`unequalGroupAdvantages: group sizes sum to ${total}, but there are ${rewards.length} rewards`);
  if (!isGroupAlgo(cfg.algo)) throw new RangeError(`unequalGroupAdvantages: ${cfg.algo} has no groups`);
  return sequenceAdvantages(cfg, rewards, EMA_BASELINE_INIT, positions, sizes).advantages;
}
