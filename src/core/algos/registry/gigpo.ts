/**
 * GiGPO (Feng et al. 2025): GRPO's episode advantage plus ω times a step-level one, from steps
 * taken in the same state across the group (`gigpoAdvantages`, algos/stepGroups.ts). The anchor
 * state is the observation the step was taken in: the grid's heading + view, or a token episode's
 * observation text (the task, or the env's reply to the previous action; `tokenStateKeys`).
 */
import { grpoEstimator } from './grpo.ts';
import { defineAlgo } from './types.ts';

export const gigpo = defineAlgo({
  name: 'gigpo',
  label: 'GiGPO (GRPO + step groups)',
  help: "'gigpo': GRPO plus step-level credit: steps taken from the same state (observation) in a group are compared by their return from there.",
  advantage: { kind: 'step-groups', episodePart: grpoEstimator },
  collects: ['anchor-states'],
  group: true,
  groupStd: true,
  fields: ['stepAdvantageWeight', 'gamma'],
  metrics: ['groups/step_groups_mean', 'groups/grouped_step_share'],
  charts: [
    {
      id: 'step-groups',
      title: 'Step groups (GiGPO)',
      help: "groups/step_groups_mean: distinct states (a grid's heading + view; a token episode's observation text) per group of episodes; every step taken from one of them is compared with the group's other steps from the same state by its return from there, and that step advantage is added to the episode's GRPO advantage. Many while the episodes wander (each state a small comparison), few once they converge on one path. The share of steps that got a comparison (groups/grouped_step_share, in metrics.jsonl) stays near 100% on small grids, where episodes keep crossing the same cells.",
      lines: [{ key: 'groups/step_groups_mean', label: 'states per group', tone: 'primary' }],
      domain: [0, 'auto'],
    },
  ],
});
