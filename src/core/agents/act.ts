/**
 * How a shipped agent picks its action in the viewer, from the policy's log-probabilities over
 * the action space: 'sampled' draws from them (how the agent was trained to act), 'greedy' takes
 * the most likely one. The draw's randomness is seeded by (episode seed, step), so watching the
 * same seed again replays the same episode, pauses or not.
 */
import { sampleRow } from '../rollout/categorical.ts';
import { mixSeed, Rng } from '../util/rng.ts';

export type AgentMode = 'sampled' | 'greedy';

export interface AgentChoice {
  action: number;
  /** π(a | s) for every action, summing to 1. */
  probs: number[];
}

export function chooseAgentAction(logprobs: ArrayLike<number>, mode: AgentMode, episodeSeed: number, step: number): AgentChoice {
  const n = logprobs.length;
  const rng = new Rng(mixSeed(episodeSeed, step));
  const { action } = sampleRow(logprobs, 0, n, rng, new Float64Array(n), mode === 'greedy' ? 0 : 1);
  // logprobs are a log-softmax already; renormalise anyway so float32 rounding never shows as 101%.
  const raw = Array.from(logprobs, (l) => Math.exp(l));
  const sum = raw.reduce((a, b) => a + b, 0);
  return { action, probs: raw.map((p) => p / sum) };
}
