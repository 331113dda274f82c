/**
 * DAPO (Yu et al. 2025; TRL's default `loss_type`): GRPO's advantages and PPO's clip with
 * clip-higher (clipHigh 0.28 > clipLow 0.2, the config's defaults), the loss normalised by the
 * batch's policy-token count Σ|o_i| ('token' aggregation), the soft overlong punishment on the
 * reward (`algo.overlong`) and truncated episodes left out of the loss (`algo.maskTruncated`),
 * both on by default (update/lengthControl.ts). Dynamic sampling is `algo.dynamicSampling`.
 */
import { grpoEstimator } from './grpo.ts';
import { defineAlgo } from './types.ts';

export const dapo = defineAlgo({
  name: 'dapo',
  label: 'DAPO (GRPO + token-level loss, overlong control)',
  help: "'dapo': GRPO's advantages, clip-higher, token-level loss over the batch, a reward ramp down to −1 over the last overlong.buffer positions before the limit, and truncated episodes masked out.",
  advantage: { kind: 'episode', estimate: grpoEstimator },
  loss: { objective: 'clip', aggregation: 'token', overlong: true, maskTruncated: true },
  group: true,
  groupStd: true,
});
