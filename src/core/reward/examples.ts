/**
 * The reward lab's starting text: the built-in shaping terms written as reward terms, editable
 * examples that are not applied until Apply (runtime/rewardSandbox tests that they load and score).
 */
export const EXAMPLE_TERMS = `// Reward terms: every named export (step) => number is added to that step's reward.
// Type "step." for the fields of the step record. Press Apply to use them
// (mid-run, they score from the next iteration on, as a new version).

// progress: the env's subgoal increments (the built-in 'progress' term, weight 0.1).
export const progressBonus = (step) => 0.1 * step.info.progress;

// A price on every step, to prefer short solutions (like the built-in 'toolCost').
export const stepCost = (step) => -0.002;

// Potential-based shaping with Φ = −(steps to the goal), as the built-in 'potential' term:
// F = Φ(s_t) − Φ(s_t−1), paid on the step after the move; it leaves the optimal policy unchanged.
export function towardGoal(step) {
  const prev = step.episode.steps[step.t - 1];
  if (!prev || prev.state.goalDistance === null || step.state.goalDistance === null) return 0;
  return 0.05 * (prev.state.goalDistance - step.state.goalDistance);
}
`;
