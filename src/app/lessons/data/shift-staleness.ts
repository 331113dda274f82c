import type { LessonInput } from '../schema.ts';

/** Lesson (d): asynchronous rollouts make the learner train on stale actions; TIS corrects for it. */
export default {
  id: 'shift-staleness',
  title: 'Shift: asynchronous rollouts and stale actions',
  summary: 'Asynchronous training keeps sampling while the learner updates, so the learner trains on actions an older policy chose. Truncated importance sampling re-weights them by how much more (or less) likely the current policy finds them.',
  badge: 'shift',
  takeaway: 'Asynchrony buys throughput with off-policy data: an action sampled k versions ago came from a different policy than the one being trained. The gradient is then biased unless it is re-weighted by π_old/μ; truncating that ratio (TIS, cap 2) keeps the variance bounded. Watch staleness and the importance-ratio charts: the bound on staleness and the cap on the ratio are the two knobs of the Shift invariant.',
  steps: [
    {
      title: 'Async, staleness up to 4, no correction',
      text: 'The empty 8×8 room with a rollout worker that keeps playing while the learner trains, allowed to run up to 4 policy versions ahead of the learner, and nothing to correct for it. Open the Shift charts: "staleness" shows how many versions old the actions in each batch are.',
      action: 'Press Start and watch the staleness chart and the Shift badge.',
      setup: {
        preset: 'grid-empty-8x8-grpo',
        overrides: [
          ['rollout.mode', 'async'],
          ['rollout.maxStaleness', 4],
          ['rollout.workers', 1],
          ['algo.tis.enabled', false],
          ['iterations', 30],
        ],
      },
      check: { all: [{ metric: 'async/staleness_mean', op: '>=', value: 1 }], for: 3, within: 15, says: 'actions are at least 1 version old on average, 3 iterations in a row' },
    },
    {
      title: 'The same, with truncated importance sampling',
      text: 'Now TIS is on (cap 2): each stale step\'s advantage is multiplied by min(π_old/μ, 2), π_old being the learner\'s probability of the action and μ the probability it had when it was sampled. The importance-ratio chart leaves 1, and the share of clipped ratios shows how often the cap bites.',
      action: 'Press Start and watch the importance-ratio charts.',
      setup: {
        preset: 'grid-empty-8x8-grpo',
        overrides: [
          ['rollout.mode', 'async'],
          ['rollout.maxStaleness', 4],
          ['rollout.workers', 1],
          ['algo.tis.enabled', true],
          ['iterations', 30],
        ],
      },
      check: {
        all: [
          { metric: 'async/staleness_mean', op: '>=', value: 1 },
          { metric: 'async/is_ratio_max', op: '>=', value: 1.05 },
        ],
        for: 3,
        within: 15,
        says: 'stale actions are re-weighted (largest ratio π_old/μ ≥ 1.05), 3 iterations in a row',
      },
    },
    {
      title: 'Synchronous, but the rollout runs in fp8',
      text: 'Staleness is back to 0, yet the policy that acts is still not the one that learns: the rollout holds its weights rounded to FP8, as a fast inference engine beside a float32 trainer does, so μ and π_old differ on every step by numerics alone. Rollout correction recomputes π_old with the learner, multiplies each advantage by min(π_old/μ, 2) and rejects steps whose ratio leaves [1/1.01, 1.01]. The "Effective sample size" chart falls below 1 and the "Rollout–learner gap" leaves 0; set the rollout precision back to float32 and every ratio is 1 again.',
      action: 'Press Start and watch the "Effective sample size" and the "Rollout–learner gap" charts in the Shift section.',
      setup: { preset: 'grid-empty-8x8-rollout-correction', overrides: [['iterations', 30]] },
      check: {
        all: [
          { metric: 'correction/is_ess', op: '<=', value: 0.999999 },
          { metric: 'correction/log_ppl_abs_diff', op: '>=', value: 1e-5 },
        ],
        for: 3,
        within: 15,
        says: 'the effective sample size is below 1 (≤ 0.999999) and the per-episode log-perplexity gap ≥ 1e-5 nats, 3 iterations in a row',
      },
    },
  ],
} satisfies LessonInput;
