/**
 * The reward-terms contract (the reward lab; ARCHITECTURE.md 'Reward lab'). A person writes an ES
 * module; each named export `(step) => number` is a term named after the export. A *scorer*
 * (a sandbox from the runtime layer: user code never runs in the page's or the CLI's own JS
 * context) evaluates every term on every step of finished episodes. The trainer's score phase:
 *
 *   collect → build step records (replay from the seed) → scorer.score → resolve non-finite values
 *           → per-step term values added to the env reward (perStep and total) → advantages
 *
 * Metrics: `reward/<term>/mean` = mean over the iteration's sampled episodes of the episode's sum
 * of that term (the same definition as the built-in shaping terms), `reward/terms_skipped` =
 * (episode, term) pairs dropped for a non-finite value, `reward/version` = the code version that
 * scored the iteration.
 *
 * Problems: a term that throws, runs past its deadline, exhausts memory or recurses too deeply stops the run (the
 * error names the term, the line and the episode's seed): a broken term has no meaningful value.
 * A non-finite or non-number value is reported and, by `onNonFinite`, either skipped (the term
 * counts 0 for that whole episode) or stops the run. No NaN reaches the advantages either way.
 */
import type { ScoreEpisode } from './stepRecord.ts';

/** What a sandbox says about one episode: per term, the raw value at each step. */
export interface RawTermScores {
  /** term → [T] values as returned; NaN where the value was not a finite number (see `bad`). */
  values: Record<string, Float64Array>;
  /** Steps whose value was not a finite number, with what was returned (e.g. 'NaN', 'undefined'). */
  bad: { term: string; t: number; returned: string }[];
}

/** A sandboxed set of reward terms. Implementations live in src/runtime (QuickJS). */
export interface RewardTermsScorer {
  /** The exported terms' names, in source order. */
  readonly terms: readonly string[];
  /** Scores finished episodes; rejects with a `RewardTermError` when a term throws, loops or runs out of memory. */
  score(episodes: readonly ScoreEpisode[]): Promise<RawTermScores[]>;
  /** Line (1-based) where a term is defined in the source, for messages; null when unknown. */
  lineOf(term: string): number | null;
  /** Frees the sandbox (after the score() in progress, if any, has settled). */
  close(): void;
  /**
   * Stops the score() in progress, and refuses later ones, with a `ScoringInterrupted` (the run
   * is stopping, e.g. Ctrl-C in the CLI): a sandbox that scores in slices checks it between them.
   */
  interrupt?(): void;
}

export type RewardProblemKind = 'load' | 'exception' | 'timeout' | 'memory' | 'stack' | 'non-finite';

/** A reward term failed; the message names the term, the line and the episode (seed). */
export class RewardTermError extends Error {
  constructor(
    readonly kind: RewardProblemKind,
    message: string,
    /** The term's name (null for a problem loading the module as a whole). */
    readonly term: string | null = null,
    readonly seed: number | null = null,
  ) {
    super(message);
    this.name = 'RewardTermError';
  }
}

/** score() was stopped by `interrupt()`: no term is at fault, the batch was left unscored. */
export class ScoringInterrupted extends Error {
  constructor(message = 'scoring was interrupted (the run is stopping)') {
    super(message);
    this.name = 'ScoringInterrupted';
  }
}

/** What to do with a term value that is not a finite number. */
export type NonFinitePolicy = 'skip' | 'stop';

/** Names the built-in shaping terms use: a user term may not take one (the metric keys would collide). */
export const RESERVED_TERM_NAMES = ['outcome', 'progress', 'format', 'toolCost', 'length', 'potential', 'mean', 'std', 'min', 'max'] as const;

/**
 * Names no term may take: they reach into objects' prototypes (a term named `__proto__` was
 * dropped from the scores without a word, one named `constructor` shadowed Object's).
 */
export const FORBIDDEN_TERM_NAMES = ['__proto__', 'constructor', 'prototype'] as const;

/** Why `name` cannot be a term's name (null when it can); `at` is appended to the export's name, e.g. ' (line 3)'. */
export function termNameProblem(name: string, at = ''): string | null {
  if ((FORBIDDEN_TERM_NAMES as readonly string[]).includes(name)) return `export '${name}'${at} has a name no term may take (${FORBIDDEN_TERM_NAMES.join(', ')}: they reach into objects' prototypes); rename it`;
  if ((RESERVED_TERM_NAMES as readonly string[]).includes(name)) return `export '${name}'${at} has the name of a built-in reward metric (${RESERVED_TERM_NAMES.join(', ')}); rename it`;
  return null;
}

/**
 * Applies the non-finite policy to one episode's raw scores: 'skip' zeroes the term over the whole
 * episode and returns one message per skipped term; 'stop' throws. The result holds only finite
 * numbers.
 */
export function resolveTermScores(
  raw: RawTermScores,
  policy: NonFinitePolicy,
  where: { seed: number; lineOf: (term: string) => number | null },
): { values: Record<string, Float64Array>; skipped: string[] } {
  const skipped: string[] = [];
  const values: Record<string, Float64Array> = {};
  for (const [term, v] of Object.entries(raw.values)) values[term] = v;
  const seen = new Set<string>();
  for (const b of raw.bad) {
    if (seen.has(b.term)) continue;
    seen.add(b.term);
    const line = where.lineOf(b.term);
    const msg = `reward term '${b.term}'${line ? ` (line ${line})` : ''} returned ${b.returned} at step ${b.t} of the episode with seed ${where.seed}: a term must return a finite number`;
    if (policy === 'stop') throw new RewardTermError('non-finite', msg, b.term, where.seed);
    skipped.push(`${msg}; the term counts 0 in this episode`);
    values[b.term] = new Float64Array(values[b.term]?.length ?? 0);
  }
  // Belt and braces: whatever a scorer returns, nothing non-finite leaves this function.
  for (const [term, v] of Object.entries(values)) {
    if (v.some((x) => !Number.isFinite(x))) {
      if (policy === 'stop') throw new RewardTermError('non-finite', `reward term '${term}' gave a non-finite value in the episode with seed ${where.seed}`, term, where.seed);
      skipped.push(`reward term '${term}' gave a non-finite value in the episode with seed ${where.seed}; the term counts 0 in this episode`);
      values[term] = new Float64Array(v.length);
    }
  }
  return { values, skipped };
}

/**
 * The line (1-based) where `export function name`, `export const name`, `export let name` or
 * `export { … name … }` appears in `code`; null when not found. For messages only.
 */
export function exportLine(code: string, name: string): number | null {
  const lines = code.split('\n');
  const esc = name.replace(/[$]/g, '\\$');
  const decl = new RegExp(`^\\s*export\\s+(?:async\\s+)?(?:function\\s*\\*?\\s*|const\\s+|let\\s+|var\\s+)${esc}\\b`);
  const list = new RegExp(`^\\s*export\\s*\\{[^}]*\\b${esc}\\b`);
  for (let i = 0; i < lines.length; i++) if (decl.test(lines[i]) || list.test(lines[i])) return i + 1;
  return null;
}

/**
 * The per-step term values added to a shaped reward: a new object (perStep, total and terms
 * extended). A `logOnly` term is recorded in `terms` (so it is logged and re-scored) but added
 * to neither `perStep` nor `total`: the advantages never see it.
 */
export function addTermRewards<S extends { total: number; terms: Record<string, number>; perStep: Float64Array }>(shaped: S, termRewards: Readonly<Record<string, Float64Array>> | undefined, logOnly: readonly string[] = []): S {
  if (!termRewards) return shaped;
  const perStep = Float64Array.from(shaped.perStep);
  const terms: Record<string, number> = { ...shaped.terms };
  let total = shaped.total;
  for (const [term, v] of Object.entries(termRewards)) {
    if (v.length !== perStep.length) throw new RangeError(`reward term '${term}': ${v.length} values for ${perStep.length} steps`);
    const trained = !logOnly.includes(term);
    let sum = 0;
    for (let t = 0; t < v.length; t++) {
      if (trained) perStep[t] += v[t];
      sum += v[t];
    }
    terms[term] = sum;
    if (trained) total += sum;
  }
  return { ...shaped, perStep, terms, total };
}
