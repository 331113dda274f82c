/**
 * The reward lab's page state (a small store of its own, read by the editor panel and the
 * training slice): the editor's text, the code applied to runs, the versions a run went through
 * (each a chart marker), and the last refusal. The text and the applied code are kept in
 * localStorage, so a reload loses nothing; the applied code also travels in the run's config
 * (`reward.code`), which the run's saved record keeps.
 */
import { create } from 'zustand';
import { EXAMPLE_TERMS } from '../../core/reward/examples.ts';

export { EXAMPLE_TERMS };

const TEXT_KEY = 'rl-playground.reward.text';
const APPLIED_KEY = 'rl-playground.reward.applied';
/** The code the person last applied with their own hands (not a preset's or a link's). */
const MINE_KEY = 'rl-playground.reward.mine';

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
  /** Term names the sandbox found in it ([] until it answered, e.g. v1 of a run started with code). */
  terms: string[];
  /** The module's source (the diff between versions reads it). */
  code: string;
}

export interface RewardLabState {
  /** The editor's text (saved as typed). */
  text: string;
  /** The code the next run starts with ('' = no user terms). */
  applied: string;
  /** The code the person last applied themselves ('' = none): a link never replaces it without asking, and it can be restored. */
  mine: string;
  /** A link or preset brought reward code while the person's own was applied: the question waits here. */
  replacing: { code: string } | null;
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
  mine: load(MINE_KEY, ''),
  replacing: null,
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

/** The person applied `code` themselves (Apply): it is theirs, kept apart from presets' and links' code. */
export function setOwnCode(code: string): void {
  setAppliedCode(code);
  save(MINE_KEY, code);
  useRewardLab.setState({ mine: code });
}

/** Applies a preset's or link's code: shown in the editor unless it holds edits not yet applied. */
function adopt(code: string): void {
  const lab = useRewardLab.getState();
  if (code !== '' && (lab.text === lab.applied || lab.text === EXAMPLE_TERMS)) lab.setText(code);
  setAppliedCode(code);
}

/**
 * A preset or a lesson step chose the run's reward code (the hackable presets carry theirs). While
 * the person's own code is applied, code that differs from it is not applied until they answer
 * (`answerReplace`): a link never silently replaces what they wrote.
 */
export function adoptRewardCode(code: string): void {
  const lab = useRewardLab.getState();
  if (code.trim() !== '' && lab.mine.trim() !== '' && lab.applied === lab.mine && code !== lab.mine) {
    useRewardLab.setState({ replacing: { code } });
    return;
  }
  useRewardLab.setState({ replacing: null });
  adopt(code);
}

/** The answer to `replacing`: keep the person's code applied, or use the link's (theirs stays restorable). */
export function answerReplace(useLinks: boolean): void {
  const r = useRewardLab.getState().replacing;
  useRewardLab.setState({ replacing: null });
  if (useLinks && r) adopt(r.code);
}

/** Puts the person's own code back in the editor and applies it (after a link's code replaced it). */
export function restoreOwnCode(): void {
  const { mine } = useRewardLab.getState();
  useRewardLab.getState().setText(mine);
  setAppliedCode(mine);
}

/** The line a sandbox message names ("(line 3)"), or null. */
export function messageLine(message: string): number | null {
  const m = /\(line (\d+)\)/.exec(message);
  return m ? Number(m[1]) : null;
}
