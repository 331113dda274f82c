/**
 * MT-GRPO (Zeng et al. 2025): GRPO with turn-level credit. Every action before an episode's last
 * gets its turn-level reward's group-normalised advantage plus λ times the outcome's; the last
 * action gets the outcome's alone (`mtGrpoAdvantages`, algos/turnCredit.ts, which also says how
 * the paper's two-turn formula extends to more turns). The turn-level reward is the turn's shaped
 * reward, the env's `info.progress`, or both (`algo.turnCredit.source`).
 */
import { grpoEstimator } from './grpo.ts';
import { defineAlgo } from './types.ts';

export const mtgrpo = defineAlgo({
  name: 'mt-grpo',
  label: 'MT-GRPO (turn-level credit)',
  help: "'mt-grpo': GRPO plus turn-level credit: each turn before the last is also compared with the same turn of its group by a turn reward (the env's step reward and/or its reported progress).",
  advantage: { kind: 'turn-credit', episodePart: grpoEstimator },
  collects: ['turn-infos'],
  group: true,
  groupStd: true,
  fields: ['turnCredit'],
});
