/**
 * The reward badge: does the shaped return the policy optimises still track the task's success,
 * or is a shaping term (or a user reward term) paying without progress on the task? Pure, from
 * the iterations' metrics, like the invariants' badges in health.ts.
 */
import { pct, THRESHOLDS, WINDOW, type Series, type Verdict } from './health.ts';

/** The reward badge's thresholds (see rewardHealth). */
export const REWARD_THRESHOLDS = {
  /** Rise of the shaped return between the earlier and the recent window, as a share of its scale (max(1, |earlier|)), that counts as rising. */
  proxyRise: 0.1,
  /** Success must rise by more than this (absolute) to count as keeping up. */
  trueRise: 0.02,
  /** A success drop of this much while the shaped return rises is 'gamed' (bad), not only 'diverging'. */
  trueFall: 0.1,
  /** Share of the return's absolute size paid by terms other than the task's own ('outcome') above which they dominate it. */
  shapingShare: 2 / 3,
  /** One term's share of the return (absolute sizes) must climb by this much (absolute) since an earlier window to count as climbing. */
  termShareRise: 0.2,
  /** ... and pay at least this share of the return now: a term that climbed from 5% to 25% is not yet the return. */
  termShareMin: 0.5,
} as const;

/** Aggregate keys under reward/ that are not terms. */
const NOT_TERMS = new Set(['mean', 'std', 'min', 'max', 'lo', 'hi']);

/**
 * The share of the return's absolute size paid by terms other than the task's own reward
 * ('outcome': user terms and built-in shaping), over the last WINDOW points before `end`; NaN
 * when the run logs no per-term means.
 */
export function shapingShareBefore(history: Series, end: number, window = WINDOW): number {
  const shares = termSharesBefore(history, end, window);
  return shares.size === 0 ? NaN : 1 - (shares.get('outcome') ?? 0);
}

/**
 * Each term's share of the return's absolute size (|mean_t| / Σ|mean_u| over the terms under
 * reward/<term>/mean), summed over the `window` points before index `end`. Empty without per-term means.
 */
export function termSharesBefore(history: Series, end: number, window = WINDOW): Map<string, number> {
  const size = new Map<string, number>();
  let all = 0;
  for (let i = Math.max(0, end - window); i < end; i++) {
    for (const [k, v] of Object.entries(history[i])) {
      if (!k.startsWith('reward/') || !k.endsWith('/mean') || !Number.isFinite(v)) continue;
      const t = k.slice('reward/'.length, -'/mean'.length);
      if (t === '' || t.includes('/') || NOT_TERMS.has(t)) continue;
      size.set(t, (size.get(t) ?? 0) + Math.abs(v));
      all += Math.abs(v);
    }
  }
  const out = new Map<string, number>();
  if (all > 0) for (const [t, v] of size) out.set(t, v / all);
  return out;
}

/**
 * A term other than the task's own ('outcome') whose share of the return climbed by
 * termShareRise to at least termShareMin, since the previous window or the run's first, while
 * success did not rise over the same span: the early sign of a term being farmed, before the
 * shaped return as a whole rises or success falls. Null when none did.
 */
function climbingTerm(history: Series, end: number, t1: number): Verdict | null {
  if (!(t1 < THRESHOLDS.solved) || end < 2 * WINDOW) return null;
  const now = termSharesBefore(history, end);
  for (const base of [end - WINDOW, WINDOW]) {
    const then = termSharesBefore(history, base);
    const tBase = recentBefore(history, 'episode/success_rate', base);
    if (!Number.isFinite(tBase) || t1 - tBase > REWARD_THRESHOLDS.trueRise) continue;
    for (const [term, share] of now) {
      if (term === 'outcome') continue;
      const was = then.get(term) ?? 0;
      if (share >= REWARD_THRESHOLDS.termShareMin && share - was >= REWARD_THRESHOLDS.termShareRise) {
        const since = base === WINDOW ? `in the first ${WINDOW} iterations` : `${WINDOW} iterations earlier`;
        return {
          level: 'warn',
          label: 'term climbing',
          text: `The term '${term}' pays ${pct(share)} of the return, up from ${pct(was)} ${since}, while success did not rise (${pct(tBase)} → ${pct(t1)}): check that it pays only for progress on the task (potential-based: γΦ(s′) − Φ(s)).`,
        };
      }
    }
  }
  return null;
}

/** Mean of `key` over the last `window` points before index `end` that have it (NaN when none do). */
function recentBefore(history: Series, key: string, end: number, window = WINDOW): number {
  let s = 0;
  let n = 0;
  for (let i = end - 1; i >= 0 && n < window; i--) {
    const v = history[i][key];
    if (v !== undefined && Number.isFinite(v)) {
      s += v;
      n++;
    }
  }
  return n ? s / n : NaN;
}

/** The reward verdict from the points before index `end` alone (no memory of earlier verdicts), with the window means it read. */
function rewardVerdictAt(history: Series, end: number): { v: Verdict; p0: number; p1: number; t0: number; t1: number } | null {
  const p0 = recentBefore(history, 'reward/mean', end - WINDOW);
  const p1 = recentBefore(history, 'reward/mean', end);
  const t0 = recentBefore(history, 'episode/success_rate', end - WINDOW);
  const t1 = recentBefore(history, 'episode/success_rate', end);
  if (![p0, p1, t0, t1].every(Number.isFinite)) return null;
  const rise = (p1 - p0) / Math.max(1, Math.abs(p0));
  const dt = t1 - t0;
  const fmt = (x: number) => x.toFixed(2);
  if (rise > REWARD_THRESHOLDS.proxyRise && t1 < THRESHOLDS.solved && dt <= -REWARD_THRESHOLDS.trueFall) {
    return { p0, p1, t0, t1, v: { level: 'bad', label: 'gamed', text: `The shaped return rose ${fmt(p0)} → ${fmt(p1)} while success fell ${pct(t0)} → ${pct(t1)}: the policy is farming a shaping term instead of doing the task; make the term potential-based (γΦ(s′) − Φ(s)) or remove it.` } };
  }
  if (rise > REWARD_THRESHOLDS.proxyRise && t1 < THRESHOLDS.solved && dt <= REWARD_THRESHOLDS.trueRise) {
    return { p0, p1, t0, t1, v: { level: 'warn', label: 'diverging', text: `The shaped return rose ${fmt(p0)} → ${fmt(p1)} but success did not (${pct(t0)} → ${pct(t1)}): check the per-term curves for a term that pays without progress on the task.` } };
  }
  const climbing = climbingTerm(history, end, t1);
  if (climbing) return { p0, p1, t0, t1, v: climbing };
  return { p0, p1, t0, t1, v: { level: 'ok', label: 'aligned', text: `Shaped return ${fmt(p0)} → ${fmt(p1)}, success ${pct(t0)} → ${pct(t1)} (means of ${WINDOW} iterations): the reward still tracks the task.` } };
}

/**
 * Reward: is the shaped reward (what the policy optimises, `reward/mean`) still measuring the
 * task (`episode/success_rate`)? Compares the last WINDOW iterations with the WINDOW before
 * them: when the shaped return rises and success does not, the policy is earning reward some
 * other way than by doing the task, the signature of a farmed shaping term (reward hacking).
 * A solved task whose shaped return still climbs is fine (there is nothing left to gain in success).
 *
 * Once 'gamed', it stays so while the hack holds: the shaped return stays above where it was
 * before the rise and success stays below what it was then, under the same reward code
 * (`reward/version`). A plateaued hack no longer rises, so the two-window comparison alone would
 * forgive it; it clears only when success recovers or the code changes.
 */
export function rewardHealth(history: Series): Verdict {
  const idle = { level: 'idle', label: 'waiting', text: `Compares the shaped reward with the task's success once ${2 * WINDOW} iterations are in.` } as const;
  if (history.length < 2 * WINDOW) return idle;
  let verdict: Verdict = idle;
  /** The hack being held: the code version, the shaped return and success before the rise, and where it was caught. */
  let held: { version: number; p0: number; t0: number; at: number } | null = null;
  /** The first hack caught in this run (kept after a code change clears `held`): success before it, and where. */
  let caught: { t0: number; at: number } | null = null;
  for (let end = 2 * WINDOW; end <= history.length; end++) {
    const now = rewardVerdictAt(history, end);
    if (!now) {
      verdict = { level: 'idle', label: 'no success rate', text: 'This run reports no success rate to compare its reward with.' };
      held = null;
      continue;
    }
    const version = history[end - 1]['reward/version'] ?? 0;
    if (now.v.label === 'gamed') {
      if (!held || held.version !== version) held = { version, p0: now.p0, t0: now.t0, at: end - 1 };
      caught ??= { t0: now.t0, at: end - 1 };
      verdict = now.v;
      continue;
    }
    if (held) {
      const scale = Math.max(1, Math.abs(held.p0));
      const stillPaid = (now.p1 - held.p0) / scale > REWARD_THRESHOLDS.proxyRise;
      const stillDown = now.t1 <= held.t0 - REWARD_THRESHOLDS.trueFall;
      const share = shapingShareBefore(history, end);
      const dominated = share > REWARD_THRESHOLDS.shapingShare;
      if (version === held.version && stillDown && (stillPaid || dominated)) {
        const why = stillPaid
          ? `the shaped return holds at ${now.p1.toFixed(2)} (${held.p0.toFixed(2)} before it rose)`
          : `terms other than the task's own reward still pay ${pct(share)} of the return`;
        verdict = {
          level: 'bad',
          label: 'gamed',
          text: `Still gamed since iteration ${held.at + 1}: ${why} while success stays at ${pct(now.t1)}, below the ${pct(held.t0)} it had then. A hack that stopped rising is still a hack: this clears when success recovers or the reward code changes.`,
        };
        continue;
      }
      held = null;
    }
    verdict = now.v;
  }
  const final = verdict.label === 'aligned' ? sinceStart(history, verdict) : verdict;
  return caught && (final.level === 'ok' || final.level === 'idle') ? afterHack(history, final, caught) : final;
}

/**
 * After a hack, a changed reward (the fix) is judged afresh, and its two windows can read
 * 'aligned' (or 'no success yet') while success is still 0: the fix has not brought the task back.
 * Until success is back within trueFall of what it was before the hack, the badge warns.
 */
function afterHack(history: Series, verdict: Verdict, caught: { t0: number; at: number }): Verdict {
  const t1 = recentBefore(history, 'episode/success_rate', history.length);
  if (!Number.isFinite(t1) || (t1 > 0 && t1 > caught.t0 - REWARD_THRESHOLDS.trueFall)) return verdict;
  return {
    level: 'warn',
    label: 'not recovered',
    text: `Success is ${pct(t1)} (last ${WINDOW} iterations), below the ${pct(caught.t0)} it had before the reward was gamed at iteration ${caught.at + 1}: whatever changed since has not brought the task back yet; if it stays there, the policy learnt the hack (lower the learning rate, or restart from before it).`,
  };
}

/**
 * The two-window comparison forgives a rise that has levelled off: a shaped return that climbed
 * in the first iterations and then sat still while success stayed at 0 (shaping that paid for
 * dying in lava: 7.7 → 11.5, success 0 for 40 iterations) read 'aligned'. So an 'aligned' verdict
 * is also checked against the run's first WINDOW iterations: a shaped return that rose since then
 * while success did not is 'diverging', and with success at 0 nothing shows the reward tracks the
 * task: it waits ('no success yet') rather than say 'aligned'.
 */
function sinceStart(history: Series, aligned: Verdict): Verdict {
  const pS = recentBefore(history, 'reward/mean', WINDOW);
  const tS = recentBefore(history, 'episode/success_rate', WINDOW);
  const p1 = recentBefore(history, 'reward/mean', history.length);
  const t1 = recentBefore(history, 'episode/success_rate', history.length);
  if (![pS, tS, p1, t1].every(Number.isFinite) || t1 >= THRESHOLDS.solved) return aligned;
  const rise = (p1 - pS) / Math.max(1, Math.abs(pS));
  if (rise > REWARD_THRESHOLDS.proxyRise && t1 - tS <= REWARD_THRESHOLDS.trueRise) {
    return {
      level: 'warn',
      label: 'diverging',
      text: `The shaped return rose ${pS.toFixed(2)} → ${p1.toFixed(2)} since the first ${WINDOW} iterations while success did not (${pct(tS)} → ${pct(t1)}): the reward pays for something other than the task; check the per-term curves for a term that pays without progress.`,
    };
  }
  if (t1 <= 0) {
    return { level: 'idle', label: 'no success yet', text: `Success is 0% (last ${WINDOW} iterations): nothing shows yet whether the shaped return (${p1.toFixed(2)}) tracks the task.` };
  }
  return aligned;
}
