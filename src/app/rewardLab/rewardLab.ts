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

/**
 * A preset or a lesson step chose the run's reward code (the hackable presets carry theirs): the
 * lab applies it, and shows it in the editor unless the editor holds edits not yet applied.
 */
export function adoptRewardCode(code: string): void {
  const lab = useRewardLab.getState();
  if (code !== '' && (lab.text === lab.applied || lab.text === EXAMPLE_TERMS)) lab.setText(code);
  setAppliedCode(code);
}

/** The line a sandbox message names ("(line 3)"), or null. */
export function messageLine(message: string): number | null {
  const m = /\(line (\d+)\)/.exec(message);
  return m ? Number(m[1]) : null;
}
