/** REINFORCE with a baseline (Williams 1992): A_i = r_i − b, b the batch mean or an EMA of past batch means. */
import { reinforceAdvantages, type ReinforceBaseline } from '../advantages.ts';
import { defineAlgo } from './types.ts';

export const reinforce = defineAlgo({
  name: 'reinforce',
  label: 'REINFORCE (baseline)',
  help: "'reinforce': each episode's reward minus a baseline (the batch mean, or a moving average over iterations); no groups, no critic.",
  advantage: {
    kind: 'episode',
    estimate: (cfg, b) => {
      const baseline: ReinforceBaseline = cfg.baseline === 'ema' ? { kind: 'ema', decay: cfg.baselineDecay, state: b.ema } : { kind: 'batch' };
      const r = reinforceAdvantages(b.rewards, baseline);
      return { advantages: r.advantages, ema: r.state ?? b.ema };
    },
  },
  group: false,
});
