/**
 * Health of the three invariants (ARCHITECTURE.md, 'The three invariants') from the latest iterations' metrics: a level, one
 * sentence on what is happening, and what to try. Pure; thresholds are named constants.
 *
 * Each verdict reads the mean over the last `WINDOW` iterations, so one noisy batch does not
 * flip a badge back and forth. Outcome also compares it with the best such mean so far.
 */

export type Level = 'ok' | 'warn' | 'bad' | 'idle';

export interface Verdict {
  level: Level;
  /** Short label for the badge ("healthy", "collapsing", ...). */
  label: string;
  /** One sentence: what the numbers say, and what to try. */
  text: string;
}

export type Invariant = 'exploration' | 'signal' | 'shift';

/** Iterations averaged per verdict. */
export const WINDOW = 3;

export const THRESHOLDS = {
  /** Normalised entropy H / ln|A| below which exploration has collapsed (bad) / is thinning (warn). */
  entropyBad: 0.1,
  entropyWarn: 0.25,
  /**
   * Token policies (|A| = the vocabulary, ~100): mean entropy per policy token, nats, below which
   * exploration has collapsed / is thinning. Not normalised by ln|V|: most tokens of a well-formed
   * tool call are forced (syntax, copied digits), so even a healthy policy sits at a few percent
   * of ln|V|, and what exploration remains lives in the few branching tokens. A one-token
   * choice between two equally likely options alone adds ln 2 / (tokens per episode) ≈ 0.02.
   */
  tokenEntropyBadNats: 0.01,
  tokenEntropyWarnNats: 0.04,
  /** Action sets larger than this are token vocabularies (grid policies have 7 actions). */
  tokenPolicyMinActions: 32,
  /** Success rate at which a low entropy is convergence, not collapse. */
  solved: 0.9,
  /** Share of zero-spread groups: bad / warn. */
  zeroStdBad: 0.9,
  zeroStdWarn: 0.5,
  /** Approx KL (nats) between behaviour and updated policy per iteration: bad / warn. */
  approxKlBad: 0.05,
  approxKlWarn: 0.02,
  /** Share of clipped ratios above which updates are being cut off. */
  clipfracWarn: 0.3,
  /** Rollout vs trainer |Δ log π| at the same weights (nats): numerics disagree above this. */
  mismatchWarn: 1e-3,
  /** Mean staleness (policy versions) at or below which the data counts as on-policy: any stale action above it needs a correction. */
  stalenessOnPolicy: 0,
  /** Mean staleness (policy versions) above which uncorrected data is bad, not only a warning. */
  stalenessWarn: 2,
  /** Share of importance ratios truncated at the TIS cap above which the correction is mostly truncation (bias), not re-weighting. */
  tisClipWarn: 0.2,
  /** Success (WINDOW mean) below its best WINDOW mean by this much: slipping (warn) / regressing (bad). */
  regressionWarn: 0.1,
  regressionBad: 0.25,
  /** A best success below this is too early to call a fall a regression. */
  regressionMinBest: 0.3,
  /** Success lost (under a third of its best, or 0) is bad from a best this high, a warning below it (it may have been luck). */
  lostMinBest: 0.1,
  /** Normalised entropy above which a policy that lost its success has scattered back toward random. */
  entropyScattered: 0.85,
} as const;

/** Metrics per iteration, oldest first. */
export type Series = readonly Readonly<Record<string, number>>[];

/** Mean of `key` over the last WINDOW points that have it (NaN when none do). */
export function recent(history: Series, key: string, window = WINDOW): number {
  let s = 0;
  let n = 0;
  for (let i = history.length - 1; i >= 0 && n < window; i--) {
    const v = history[i][key];
    if (v !== undefined && Number.isFinite(v)) {
      s += v;
      n++;
    }
  }
  return n ? s / n : NaN;
}

/** A share as a whole percent. */
export const pct = (x: number) => `${Math.round(x * 100)}%`;

/** The best WINDOW-iteration mean of `key` so far, over the points that have it (NaN without data). One pass. */
export function best(history: Series, key: string, window = WINDOW): number {
  const xs: number[] = [];
  for (const p of history) {
    const v = p[key];
    if (v !== undefined && Number.isFinite(v)) xs.push(v);
  }
  if (xs.length === 0) return NaN;
  const w = Math.min(window, xs.length);
  let sum = 0;
  for (let i = 0; i < w; i++) sum += xs[i];
  let top = sum / w;
  for (let i = w; i < xs.length; i++) {
    sum += xs[i] - xs[i - w];
    top = Math.max(top, sum / w);
  }
  return top;
}

/** Where the best WINDOW-iteration mean of `key` starts, as an index into `history` (-1 without data). */
function bestStart(history: Series, key: string, window = WINDOW): number {
  const at: number[] = [];
  for (let i = 0; i < history.length; i++) {
    const v = history[i][key];
    if (v !== undefined && Number.isFinite(v)) at.push(i);
  }
  if (at.length === 0) return -1;
  const w = Math.min(window, at.length);
  let sum = 0;
  for (let i = 0; i < w; i++) sum += history[at[i]][key];
  let top = sum;
  let start = at[0];
  for (let i = w; i < at.length; i++) {
    sum += history[at[i]][key] - history[at[i - w]][key];
    if (sum > top) [top, start] = [sum, at[i - w + 1]];
  }
  return start;
}

/**
 * The index of the fall's first iteration: the first point after the best window (which starts at
 * `from`) whose `key` is below its best mean `top` by min(regressionWarn, top / 2). The last index
 * when no single point is (a slow slide that only the window mean shows).
 */
function fallStart(history: Series, key: string, from: number, top: number): number {
  const below = top - Math.min(THRESHOLDS.regressionWarn, top / 2);
  for (let i = Math.max(0, from + WINDOW); i < history.length; i++) {
    const v = history[i][key];
    if (v !== undefined && Number.isFinite(v) && v < below) return i;
  }
  return history.length - 1;
}

/** A change a person made while the run trained: from `iteration` (0-based, = its index in the history) on. */
export interface RunChange {
  iteration: number;
  /** What changed, as a person reads it ("Learning rate", "reward code v2"). */
  what: string;
}

/**
 * Outcome: is the agent still as good as it has been? The invariants can read healthy while a
 * live edit (a large entropy coef, a high learning rate) unlearns the task, so this compares the
 * last WINDOW iterations' success with the best WINDOW so far. It is never green while success
 * is below a third of its best, or back at 0 after being above it, however low that best was,
 * nor while success has never been above 0 (idle for the first 2·WINDOW iterations, then a warning).
 * When the fall follows a change the person made (`changes`: live settings, applied reward code),
 * the verdict names that change rather than a generic cause.
 */
export function outcomeHealth(history: Series, changes: readonly RunChange[] = []): Verdict {
  if (history.length === 0) return { level: 'idle', label: 'waiting', text: 'Shows whether success keeps up with its best so far once training starts.' };
  const key = 'episode/success_rate';
  const now = recent(history, key);
  const top = best(history, key);
  const n = Math.min(WINDOW, history.length);
  const w = n === 1 ? 'the last iteration' : `mean of the last ${n} iterations`;
  if (!Number.isFinite(now)) return { level: 'idle', label: 'no success rate', text: 'This run reports no success rate.' };
  const drop = top - now;
  // The likeliest cause of a fall: the latest change made after the best window began and at or
  // before the fall's first iteration. A change made after the fall began (a fix) did not cause it.
  const from = bestStart(history, key);
  const fell = fallStart(history, key, from, top);
  const cause = [...changes].reverse().find((c) => c.iteration > from && c.iteration <= fell);
  const later = changes.find((c) => c.iteration > fell);
  const because = cause
    ? ` since ${cause.what} changed at iteration ${cause.iteration + 1}: undo that change to check it is the cause`
    : later
      ? `: the fall began at iteration ${fell + 1}, before ${later.what} changed at iteration ${later.iteration + 1}, so that change is not its cause`
      : '';
  if (top >= THRESHOLDS.regressionMinBest && drop >= THRESHOLDS.regressionBad) {
    return { level: 'bad', label: 'regressing', text: `Success fell to ${pct(now)} (${w}) from its best of ${pct(top)}${because || ' while training goes on: recent updates are unlearning the task; undo the last setting change or lower the learning rate'}.` };
  }
  if (top > 0 && (now <= 0 || now < top / 3)) {
    const lost = now <= 0;
    const lowBest = top < THRESHOLDS.lostMinBest;
    return {
      level: lowBest ? 'warn' : 'bad',
      label: lost ? 'lost' : 'regressing',
      text: `Success is ${pct(now)} (${w}), ${lost ? 'back to nothing' : 'under a third of'} after its best of ${pct(top)}${because || (lowBest ? ': a best this low may have been luck; if it stays down, the updates are not finding the task (shape the reward, or raise the group size)' : ': recent updates are unlearning the task; undo the last setting change or lower the learning rate')}.`,
    };
  }
  // Never above 0: nothing was lost, but nothing is held either, so it is never green. Early on
  // that is normal (idle); after 2·WINDOW iterations it is the thing to act on (warn). No change
  // is blamed: there was no fall for one to cause.
  if (top <= 0) {
    const its = `${history.length} iteration${history.length === 1 ? '' : 's'}`;
    if (history.length < 2 * WINDOW) return { level: 'idle', label: 'no success yet', text: `No episode has succeeded yet (${its}): a sparse task can take a few iterations to find the goal once.` };
    return { level: 'warn', label: 'no success yet', text: `No episode has succeeded in ${its}: with no success in any group there is nothing to learn from; shape the reward (potential), raise the group size, or keep entropy up.` };
  }
  if (top >= THRESHOLDS.regressionMinBest && drop >= THRESHOLDS.regressionWarn) {
    return { level: 'warn', label: 'slipping', text: `Success is ${pct(now)} (${w}), below its best of ${pct(top)}${because || ': watch whether it recovers; if it keeps falling, lower the learning rate'}.` };
  }
  return { level: 'ok', label: now >= THRESHOLDS.solved ? 'solved' : 'holding', text: `Success is ${pct(now)} (${w}); its best so far is ${pct(top)}.` };
}

/**
 * Exploration verdict from the policy entropy. `numActions` is the policy's action-set size:
 * for small discrete sets (grids) entropy is read as a share of its maximum ln|A|; for token
 * policies (|A| > THRESHOLDS.tokenPolicyMinActions, or 0 when unknown for a text action space
 * with `tokens` set) as nats per policy token against absolute thresholds (see THRESHOLDS).
 */
export function explorationHealth(history: Series, numActions: number, tokens = numActions > THRESHOLDS.tokenPolicyMinActions): Verdict {
  if (history.length === 0) return { level: 'idle', label: 'waiting', text: 'Shows whether the policy still tries different things once training starts.' };
  const h = recent(history, 'actor/rollout_entropy');
  const ent = Number.isFinite(h) ? h : recent(history, 'actor/entropy');
  const success = recent(history, 'episode/success_rate');
  const distinct = recent(history, 'episode/distinct_ratio');
  const d = Number.isFinite(distinct) ? `, ${pct(distinct)} of episodes distinct` : '';
  // One scale for both kinds: x = the reading, bad / warn = its thresholds, said = how to say it.
  const scale = tokens
    ? { x: ent, bad: THRESHOLDS.tokenEntropyBadNats, warn: THRESHOLDS.tokenEntropyWarnNats, said: `${ent.toFixed(3)} nats per token` }
    : (() => {
        const norm = ent / Math.log(Math.max(2, numActions));
        return { x: norm, bad: THRESHOLDS.entropyBad, warn: THRESHOLDS.entropyWarn, said: `${pct(norm)} of its maximum` };
      })();
  // High-entropy collapse: the policy forgot what it knew and acts near-randomly again.
  const top = best(history, 'episode/success_rate');
  if (!tokens && scale.x >= THRESHOLDS.entropyScattered && top >= THRESHOLDS.regressionMinBest && top - success >= THRESHOLDS.regressionBad) {
    return { level: 'bad', label: 'scattered', text: `Entropy rose to ${scale.said} while success fell from ${pct(top)} to ${pct(success)}: the policy is close to random again; the entropy bonus outweighs the reward, so lower the entropy coef (or the learning rate).` };
  }
  if (success >= THRESHOLDS.solved && scale.x < scale.warn) {
    return { level: 'ok', label: 'converged', text: `Entropy is ${scale.said}${d}: the task is solved, so a narrow policy is expected.` };
  }
  if (scale.x < scale.bad) {
    return { level: 'bad', label: 'collapsed', text: `Entropy fell to ${scale.said} before the task is solved (success ${pct(success)}): raise the entropy coef or clip high, or lower the learning rate.` };
  }
  if (scale.x < scale.warn) {
    return { level: 'warn', label: 'narrowing', text: `Entropy is down to ${scale.said} with success at ${pct(success)}: if success stalls, raise the entropy coef or clip high.` };
  }
  return { level: 'ok', label: 'healthy', text: `Entropy is ${scale.said}${d}: the policy still tries different ${tokens ? 'continuations' : 'paths'}.` };
}

export function signalHealth(history: Series, grouped: boolean): Verdict {
  if (history.length === 0) return { level: 'idle', label: 'waiting', text: 'Shows whether batches still contain comparisons the optimizer can learn from.' };
  // A distill stage learns from the teacher's per-action probabilities, not from reward
  // differences: group spread and advantages say nothing about it (and stage 1's values would
  // linger in the window).
  if (Number.isFinite(history[history.length - 1]['distill/teacher_prob'])) {
    return { level: 'idle', label: 'not applicable', text: "This stage distils: every action gets a target from the teacher's probabilities, so the signal does not depend on rewards differing. Watch distill/teacher_prob and the student's success instead." };
  }
  const success = recent(history, 'episode/success_rate');
  if (grouped) {
    const z = recent(history, 'groups/frac_zero_std');
    if (z >= THRESHOLDS.zeroStdBad) {
      if (success >= THRESHOLDS.solved) {
        return { level: 'ok', label: 'saturated', text: `${pct(z)} of groups have zero reward spread because nearly every episode succeeds: the task is learnt; make it harder to keep learning.` };
      }
      return { level: 'bad', label: 'no signal', text: `${pct(z)} of groups have zero reward spread, so their advantages are all 0: raise the group size, shape the reward, or turn on dynamic sampling.` };
    }
    if (z >= THRESHOLDS.zeroStdWarn && success < THRESHOLDS.solved) {
      return { level: 'warn', label: 'thin', text: `${pct(z)} of groups have zero reward spread and teach nothing: a larger group size or dynamic sampling gives more usable comparisons.` };
    }
    return { level: 'ok', label: 'healthy', text: `${pct(1 - (Number.isFinite(z) ? z : 0))} of groups contain different rewards, so their advantages push the policy somewhere.` };
  }
  const advStd = recent(history, 'adv/std');
  if (!(advStd > 1e-6)) {
    return { level: 'bad', label: 'no signal', text: 'Every advantage is 0: all episodes scored alike. Shape the reward or make the task easier to reach.' };
  }
  return { level: 'ok', label: 'healthy', text: `Advantages spread with std ${advStd.toFixed(2)}: episodes differ and the update has a direction.` };
}

/** The run's off-policy correction, from its config (algo.tis): TIS re-weights stale actions by min(π_old/μ, cap). */
export interface ShiftCorrection {
  /** Truncated importance sampling on (algo.tis.enabled). */
  tis: boolean;
  /** The truncation cap on the importance ratio (algo.tis.cap). */
  cap: number;
}

/**
 * Shift: does the learner train on the policy that acted? Green only when it does (staleness 0:
 * lockstep, or no stale action in the last WINDOW iterations) or when stale actions are corrected
 * (TIS on and its weights within bounds: under THRESHOLDS.tisClipWarn of the ratios truncated at
 * the cap). Stale and uncorrected says how stale and what corrects it. `correction` defaults to none.
 */
export function shiftHealth(history: Series, correction: ShiftCorrection = { tis: false, cap: 0 }): Verdict {
  if (history.length === 0) return { level: 'idle', label: 'waiting', text: 'Shows whether the data the learner trains on still matches the policy that produced it.' };
  const kl = recent(history, 'actor/approx_kl');
  const clip = recent(history, 'actor/clipfrac_low') + recent(history, 'actor/clipfrac_high');
  const mm = recent(history, 'mismatch/logprob_abs_diff_max');
  const stale = recent(history, 'async/staleness_mean');
  const staleMax = recent(history, 'async/staleness_max');
  const ratioMax = recent(history, 'async/is_ratio_max');
  const truncated = recent(history, 'async/is_clipfrac');
  if (kl > THRESHOLDS.approxKlBad) {
    return { level: 'bad', label: 'jumping', text: `Each update moves the policy by ${kl.toFixed(3)} nats (approx KL): lower the learning rate or the update epochs.` };
  }
  if (mm > THRESHOLDS.mismatchWarn) {
    return { level: 'warn', label: 'mismatch', text: `Rollout and trainer disagree by up to ${mm.toExponential(1)} nats on the same weights: the backends' numerics differ; watch for drift.` };
  }
  const old = `Actions are ${stale.toFixed(1)} policy versions old on average${Number.isFinite(staleMax) ? ` (up to ${Math.round(staleMax)})` : ''}`;
  const stalePart = stale > THRESHOLDS.stalenessOnPolicy;
  if (stalePart && !correction.tis) {
    return {
      level: stale > THRESHOLDS.stalenessWarn ? 'bad' : 'warn',
      label: 'stale, uncorrected',
      text: `${old} and nothing corrects for it: the learner trains on an older policy's choices. Turn on TIS (algo.tis) to re-weight them, or lower the max staleness (rollout.maxStaleness; 0 trains on-policy).`,
    };
  }
  if (stalePart && truncated > THRESHOLDS.tisClipWarn) {
    return {
      level: 'warn',
      label: 'over the cap',
      text: `${old}; TIS is on, but ${pct(truncated)} of the importance ratios exceed the cap of ${correction.cap} and are truncated, so the correction is mostly bias: lower the max staleness (rollout.maxStaleness).`,
    };
  }
  if (kl > THRESHOLDS.approxKlWarn || clip > THRESHOLDS.clipfracWarn) {
    return { level: 'warn', label: 'large steps', text: `Updates are large (approx KL ${kl.toFixed(3)}, ${pct(clip)} of ratios clipped): a lower learning rate keeps them in the trust region.` };
  }
  if (stalePart) {
    return {
      level: 'ok',
      label: 'corrected',
      text: `${old}; TIS re-weights them by min(π_old/μ, ${correction.cap})${Number.isFinite(ratioMax) ? ` (largest ratio ${ratioMax.toFixed(2)}, ${pct(Number.isFinite(truncated) ? truncated : 0)} truncated)` : ''}: the learner's gradient is corrected for the policy that acted.`,
    };
  }
  return { level: 'ok', label: 'bounded', text: `Approx KL ${Number.isFinite(kl) ? kl.toFixed(4) : '–'} per update and rollout = trainer log-probs: the learner trains on the policy that acted.` };
}
