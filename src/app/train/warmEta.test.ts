import { describe, expect, it } from 'vitest';
import { ETA_MIN_STEPS, formatWarmEta, nextWarmEta, resumeWarmEta, warmActivity, type WarmEta, type WarmSample } from './warmEta.ts';

/** Reports of a warm start whose step k (1-based) took ms(k) milliseconds; the first report at t = 0 after step 1. */
function samples(n: number, ms: (k: number) => number): WarmSample[] {
  const out: WarmSample[] = [];
  let t = 0;
  for (let k = 1; k <= n; k++) {
    if (k > 1) t += ms(k);
    out.push({ step: k, t });
  }
  return out;
}

/** Every estimate shown as the reports arrive one by one. */
function shown(all: readonly WarmSample[], total: number): (WarmEta | null)[] {
  const out: (WarmEta | null)[] = [];
  let prev: WarmEta | null = null;
  for (let i = 1; i <= all.length; i++) {
    prev = nextWarmEta(all.slice(0, i), total, prev);
    out.push(prev);
  }
  return out;
}

/** A repeatable jitter in [-1, 1] (no Math.random: the test must read the same every run). */
const jitter = (k: number) => Math.sin(k * 12.9898) * 0.5 + Math.sin(k * 78.233) * 0.5;

describe('warm-start ETA', () => {
  it('shows nothing until it has measured 10 step times, then says it is timing', () => {
    const s = samples(ETA_MIN_STEPS, () => 30);
    expect(nextWarmEta(s, 800, null)).toBeNull(); // 10 reports = 9 step times
    expect(formatWarmEta(null)).toBe('timing the first steps…');
    expect(nextWarmEta(samples(ETA_MIN_STEPS + 1, () => 30), 800, null)).not.toBeNull();
  });

  it('a steady pace: the time left is the remaining steps times the step time', () => {
    const s = samples(100, (k) => 30 + 3 * jitter(k));
    const eta = nextWarmEta(s, 800, null)!;
    // 700 steps left at ~30 ms = 21 s.
    expect(eta.leftS).toBeGreaterThan(21 * 0.9);
    expect(eta.leftS).toBeLessThan(21 * 1.1);
    expect(formatWarmEta(eta)).toMatch(/^about 2\d s left$/);
  });

  it('slow first steps (building the sessions) do not make a 25 s warm start read minutes', () => {
    // 5 steps of 2 s, then 30 ms steps: 800 steps take 8 s + 24 s. The pace over all reports so far
    // (the display before this module) read (4 × 2000 + 15 × 30) / 19 = 445 ms/step at step 20,
    // 780 × 0.445 = 347 s: "6 min left" where 23 s were left.
    const s = samples(20, (k) => (k <= 5 ? 2000 : 30));
    const eta = nextWarmEta(s, 800, null)!;
    expect(eta.leftS).toBeGreaterThan(780 * 0.03 * 0.9);
    expect(eta.leftS).toBeLessThan(780 * 0.03 * 1.1);
    expect(formatWarmEta(eta)).toBe('about 23 s left');
  });

  it('a pace that changes (9 → 10 → 2 min kind of swing) moves the estimate by at most the measured spread per report, and it still converges', () => {
    // 60 steps at ~700 ms (a busy machine), then ~150 ms: the raw estimate falls from ~9 min to ~2.
    const total = 800;
    const s = samples(400, (k) => (k <= 60 ? 700 + 60 * jitter(k) : 150 + 15 * jitter(k)));
    const etas = shown(s, total);
    let prev: WarmEta | null = null;
    let moves = 0;
    for (const e of etas) {
      if (e && prev) {
        const expected = Math.max(0, prev.leftS - (e.at - prev.at) / 1000);
        expect(Math.abs(e.leftS - expected)).toBeLessThanOrEqual(e.spreadS + 1e-9);
        moves++;
      }
      prev = e ?? prev;
    }
    expect(moves).toBeGreaterThan(300);
    // By the end it reads the new pace: 400 steps left at ~150 ms = 60 s.
    const last = etas[etas.length - 1]!;
    expect(last.leftS).toBeGreaterThan(60 * 0.85);
    expect(last.leftS).toBeLessThan(60 * 1.15);
  });

  it('a 60 s Pause neither eats the time left nor swings it: the countdown restarts at the resume', () => {
    const before = samples(100, (k) => 30 + 3 * jitter(k));
    const eta = shown(before, 800)[99]!;
    const resumedAt = before[99].t + 60_000;
    // The step in flight at the Pause reports 30 ms after the resume.
    const after = [...before, { step: 101, t: resumedAt + 30 }];
    const next = nextWarmEta(after, 800, resumeWarmEta(eta, resumedAt))!;
    expect(Math.abs(next.leftS - (eta.leftS - 0.03))).toBeLessThanOrEqual(next.spreadS + 1e-9);
    expect(next.leftS).toBeGreaterThan(699 * 0.03 * 0.9);
    // Without the restart the 60 s would count as time spent: the estimate would be pinned near 0.
    expect(nextWarmEta(after, 800, eta)!.leftS).toBeLessThan(1);
  });

  it('never reads below 0, and 0 once every step is done', () => {
    const s = samples(800, (k) => 30 + 3 * jitter(k));
    const etas = shown(s, 800).filter((e): e is WarmEta => e !== null);
    expect(etas.every((e) => e.leftS >= 0)).toBe(true);
    expect(etas[etas.length - 1].leftS).toBe(0);
  });

  it('says what is happening', () => {
    expect(warmActivity(312, 800, false)).toBe('imitating the expert: 312 of 800 steps');
    expect(warmActivity(312, 800, true)).toBe('paused while imitating the expert: 312 of 800 steps');
    expect(formatWarmEta({ leftS: 250, spreadS: 3, at: 0 })).toBe('about 4 min left');
  });
});
