/**
 * The warm start's time left, from measured step times only (pure: no store, no DOM).
 *
 * Each report of the warm start is one imitation step with the page's clock time. The pace is the
 * median time per step over the last ETA_WINDOW steps (the first steps include building the
 * sessions and run 10-100× slower; a mean over them once read "2 min left" for a 25 s warm start),
 * and the spread is the uncertainty of that median (interquartile range / √n) times the steps left. The estimate is shown only once
 * ETA_MIN_STEPS step times are measured, and from one report to the next the shown time left moves
 * only by the time that passed plus at most the spread: a pace that truly changes moves the
 * estimate within a few reports, a noisy one does not swing it (a 9 → 10 → 2 min swing was seen).
 */

/** Step times measured before any time left is shown. */
export const ETA_MIN_STEPS = 10;
/** Most recent step times the pace is read from. */
export const ETA_WINDOW = 50;

/** One warm-start report: steps done (1-based) and the page's clock when it arrived, ms. */
export interface WarmSample {
  step: number;
  t: number;
}

/** The shown estimate: seconds left, its spread (seconds), and the clock time (ms) it was made at. */
export interface WarmEta {
  leftS: number;
  spreadS: number;
  at: number;
}

/** The q-quantile (0..1) of sorted values, linearly interpolated. */
function quantile(sorted: readonly number[], q: number): number {
  const i = (sorted.length - 1) * q;
  const lo = Math.floor(i);
  const hi = Math.ceil(i);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (i - lo);
}

/** Milliseconds per step between consecutive reports, the newest ETA_WINDOW of them. */
export function stepTimes(samples: readonly WarmSample[]): number[] {
  const out: number[] = [];
  for (let i = Math.max(1, samples.length - ETA_WINDOW); i < samples.length; i++) {
    const ds = samples[i].step - samples[i - 1].step;
    if (ds > 0) out.push((samples[i].t - samples[i - 1].t) / ds);
  }
  return out;
}

/**
 * The next estimate after the newest sample, given the one shown before (null at first). Null
 * while fewer than ETA_MIN_STEPS step times are measured.
 */
export function nextWarmEta(samples: readonly WarmSample[], total: number, prev: WarmEta | null): WarmEta | null {
  const times = stepTimes(samples).sort((a, b) => a - b);
  if (times.length < ETA_MIN_STEPS) return null;
  const last = samples[samples.length - 1];
  const remaining = Math.max(0, total - last.step);
  const median = quantile(times, 0.5);
  // How uncertain the pace is: the step times' interquartile range over √n (about the median's
  // standard error), for every step left. A steady pace barely moves the estimate; a changed one
  // widens the range while the window holds both paces, and the estimate follows within reports.
  const spreadS = (remaining * (quantile(times, 0.75) - quantile(times, 0.25))) / Math.sqrt(times.length) / 1000;
  const raw = (remaining * median) / 1000;
  if (!prev) return { leftS: raw, spreadS, at: last.t };
  // What the previous estimate says now: less by the time that passed since.
  const expected = Math.max(0, prev.leftS - (last.t - prev.at) / 1000);
  const leftS = remaining === 0 ? 0 : Math.min(expected + spreadS, Math.max(expected - spreadS, raw));
  return { leftS: Math.max(0, leftS), spreadS, at: last.t };
}

/**
 * The estimate after a Pause of the warm start ends at `now` (ms): the time paused is no time spent
 * on steps, so the countdown starts again from the resume (the paused step's long time is one of
 * ETA_WINDOW in the median and does not move it).
 */
export function resumeWarmEta(eta: WarmEta | null, now: number): WarmEta | null {
  return eta && { ...eta, at: now };
}

/** "about 40 s left", "about 3 min left"; under 10 step times "timing the first steps…". */
export function formatWarmEta(eta: WarmEta | null): string {
  if (!eta) return 'timing the first steps…';
  const s = eta.leftS;
  return s >= 90 ? `about ${Math.round(s / 60)} min left` : `about ${Math.max(1, Math.round(s))} s left`;
}

/** What the warm start is doing, in words: "imitating the expert: 312 of 800 steps". */
export function warmActivity(step: number, total: number, paused: boolean): string {
  return `${paused ? 'paused while imitating the expert' : 'imitating the expert'}: ${step} of ${total} steps`;
}
