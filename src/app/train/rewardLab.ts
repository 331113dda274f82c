/**
 * The reward lab's page state (a small store of its own, read by the editor panel and the
 * training slice): the editor's text, the code applied to runs, the versions a run went through
 * (each a chart marker), and the last refusal. The text and the applied code are kept in
 * localStorage, so a reload loses nothing; the applied code also travels in the run's config
 * (`reward.code`), which the run's saved record keeps.
 */
import { create } from 'zustand';

/** The built-in shaping terms, written as reward terms: editable examples, not applied until Apply. */
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

const TEXT_KEY = 'rl-playground.reward.text';
const APPLIED_KEY = 'rl-playground.reward.applied';

function load(key: string, fallback: string): string {
  try {
    return globalThis.localStorage?.getItem(key) ?? fallback;
  } catch {
    return fallback;
  }
}

function save(key: string, value: string): void {
  try {
    globalThis.localStorage?.setItem(key, value);
  } catch {
    // Storage full or blocked: the code still lives in the editor and the run's config.
  }
}

/** A code version of the current run: it scored iterations from `iteration` (0-based) on. */
export interface RewardVersion {
  version: number;
  iteration: number;
  terms: string[];
}

export interface RewardLabState {
  /** The editor's text (saved as typed). */
  text: string;
  /** The code the next run starts with ('' = no user terms). */
  applied: string;
  /** Versions of the current run, oldest first; empty without user terms. */
  versions: RewardVersion[];
  /** The last refusal (a module that did not load, a term that threw or looped), with its line when known. */
  error: { message: string; line: number | null } | null;
  /** Latest problems a run reported (skipped non-finite values). */
  problems: string[];
  applying: boolean;
  setText(text: string): void;
}

export const useRewardLab = create<RewardLabState>((set) => ({
  text: load(TEXT_KEY, EXAMPLE_TERMS),
  applied: load(APPLIED_KEY, ''),
  versions: [],
  error: null,
  problems: [],
  applying: false,
  setText: (text) => {
    save(TEXT_KEY, text);
    set({ text });
  },
}));

/** Records `code` as the code runs start with (after it was accepted). */
export function setAppliedCode(code: string): void {
  save(APPLIED_KEY, code);
  useRewardLab.setState({ applied: code });
}

/** The line a sandbox message names ("(line 3)"), or null. */
export function messageLine(message: string): number | null {
  const m = /\(line (\d+)\)/.exec(message);
  return m ? Number(m[1]) : null;
}

/** The user terms a run's metrics report: `reward/<term>/mean` keys that are not built-in. */
export function userTermsOf(versions: readonly RewardVersion[]): string[] {
  return [...new Set(versions.flatMap((v) => v.terms))];
}
