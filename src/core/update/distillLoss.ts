/**
 * The distillation loss of a token student (ARCHITECTURE.md, 'Staged pipelines'): at every
 * policy position of the student's own sampled episodes, the exact reverse KL between the two
 * models' next-token distributions over the whole vocabulary,
 *
 *   KL_t(π_s‖π_t) = Σ_v π_s(v | x_<t) · (log π_s(v | x_<t) − log π_t(v | x_<t))     (nats)
 *
 * (GKD's on-policy variant with the reverse KL; Agarwal et al. 2024). The teacher's log-probs
 * [...lead, V] are a constant input; the gradient flows through the student's log-softmax only.
 * The sampling distribution's dependence on the student is not differentiated (GKD does the same):
 * each position's KL is minimised on the contexts the student reached.
 */
import type { Graph, Tensor } from '../graph/builder.ts';

/** Reverse-KL distillation onto a teacher's full next-token distributions. */
export interface DistillLoss {
  kind: 'distill';
  /** Weight of the KL term (the live `kl_coef` input; the loss is klCoef · Σ w·KL). Default 1. */
  klCoef: number;
}

export const DISTILL_LOSS_DEFAULTS: DistillLoss = { kind: 'distill', klCoef: 1 };

/** The batch input holding the teacher's log-probs, [...lead, V] float32. */
export const TEACHER_LOGPROBS = 'teacher_logprobs';

/**
 * Per-position reverse KL [...lead] from the student's log-probs `logp` [...lead, V]
 * (differentiated) and the teacher's `teacher` [...lead, V]. Teacher log-probs are clamped at
 * −1e4 so a token the teacher never emits adds a large but finite penalty (π_s·(log π_s + 1e4)).
 */
export function reverseKl(g: Graph, logp: Tensor, teacher: Tensor): Tensor {
  return g.reduceSum(g.mul(g.exp(logp), g.sub(logp, g.maximum(teacher, -1e4))), [-1]);
}
