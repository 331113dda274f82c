import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SHAPING,
  parseShapingConfig,
  parseShapingSchedule,
  PROGRESSIVE_SCHEDULE,
  SCHEDULE_START,
  shapeEpisode,
  stepSchedule,
  type EpisodeRecord,
  type ShapingConfig,
  type ShapingSchedule,
} from './shaping.ts';

describe('shapeEpisode', () => {
  // 4 steps: call a tool (+0.5 progress), malformed action, another tool (+0.25), final answer (env reward 1).
  // 30 policy tokens, 20 free.
  const ep: EpisodeRecord = {
    rewards: [0, 0, 0, 1],
    infos: [{ toolCall: 'calc', progress: 0.5 }, { malformed: true }, { toolCall: 'lookup', progress: 0.25 }, { success: true }],
    terminated: true,
    truncated: false,
    policyTokens: 30,
  };
  const cfg: ShapingConfig = {
    ...DEFAULT_SHAPING,
    progress: { weight: 0.5 },
    format: { weight: 0.2 },
    toolCost: { weight: 0.05 },
    length: { weight: 0.01, freeTokens: 20 },
  };

  it('totals and per-term values', () => {
    // raw: outcome 1, progress 0.75, format −1, toolCost −2, length −(30 − 20) = −10.
    // contributions: 1, 0.375, −0.2, −0.1, −0.1 -> total 0.975.
    const s = shapeEpisode(ep, cfg);
    expect(s.raw).toEqual({ outcome: 1, progress: 0.75, format: -1, toolCost: -2, length: -10, potential: 0 });
    expect(s.terms.outcome).toBe(1);
    expect(s.terms.progress).toBeCloseTo(0.375, 12);
    expect(s.terms.format).toBeCloseTo(-0.2, 12);
    expect(s.terms.toolCost).toBeCloseTo(-0.1, 12);
    expect(s.terms.length).toBeCloseTo(-0.1, 12);
    expect(s.total).toBeCloseTo(0.975, 12);
  });

  it('per-step placement sums to the total', () => {
    // t0: 0.5·0.5 − 0.05 = 0.2; t1: −0.2; t2: 0.5·0.25 − 0.05 = 0.075; t3: 1 − 0.1 (length) = 0.9.
    const s = shapeEpisode(ep, cfg);
    [0.2, -0.2, 0.075, 0.9].forEach((v, t) => expect(s.perStep[t]).toBeCloseTo(v, 12));
  });

  it('default config is the outcome alone', () => {
    expect(shapeEpisode(ep, DEFAULT_SHAPING).total).toBe(1);
  });

  describe('potential-based', () => {
    // Φ = −distance to goal: [−3, −2, −3, −1, −0.5] (Φ(s_4) is ignored when terminated).
    const pot = (gamma: number, weight = 1): ShapingConfig => ({ ...DEFAULT_SHAPING, outcome: { weight: 0 }, potential: { weight, gamma } });
    const base = { ...ep, potentials: [-3, -2, -3, -1, -0.5] };

    it('γ = 0.9, terminated: Φ(s_T) := 0', () => {
      // F0 = 0.9·(−2) + 3 = 1.2; F1 = 0.9·(−3) + 2 = −0.7; F2 = 0.9·(−1) + 3 = 2.1; F3 = 0 + 1 = 1. Σ = 3.6.
      const s = shapeEpisode(base, pot(0.9));
      [1.2, -0.7, 2.1, 1].forEach((v, t) => expect(s.perStep[t]).toBeCloseTo(v, 12));
      expect(s.total).toBeCloseTo(3.6, 12);
    });

    it('γ = 1 telescopes to Φ(s_T) − Φ(s_0): the same for every path from one start', () => {
      // Terminated: 0 − (−3) = 3, whatever the path (here a detour, and a direct path).
      expect(shapeEpisode(base, pot(1)).total).toBeCloseTo(3, 12);
      expect(shapeEpisode({ ...base, potentials: [-3, -2, -1, 0, 0] }, pot(1)).total).toBeCloseTo(3, 12);
      // Truncated: the episode did not end, so Φ(s_4) = −0.5 counts: −0.5 + 3 = 2.5.
      expect(shapeEpisode({ ...base, terminated: false, truncated: true }, pot(1)).total).toBeCloseTo(2.5, 12);
    });

    // The same path ending in failure (lava): the last info has no success. The floor (the lowest Φ
    // the episode can reach) is −10.
    const failed = { ...base, infos: [...ep.infos.slice(0, 3), {}], potentialFloor: -10 };

    it('failure ends at the floor: γ = 1, Σ = floor − Φ(s_0) = −7, below the same path truncated (2.5) or succeeding (3)', () => {
      // F0 = −2 + 3 = 1; F1 = −3 + 2 = −1; F2 = −1 + 3 = 2; F3 = −10 + 1 = −9.
      const s = shapeEpisode(failed, pot(1));
      [1, -1, 2, -9].forEach((v, t) => expect(s.perStep[t]).toBeCloseTo(v, 12));
      expect(s.total).toBeCloseTo(-7, 12);
      expect(shapeEpisode({ ...failed, terminated: false, truncated: true }, pot(1)).total).toBeCloseTo(2.5, 12);
      expect(shapeEpisode({ ...failed, infos: ep.infos }, pot(1)).total).toBeCloseTo(3, 12);
    });

    it('failure, γ = 0.9: F3 = 0.9·(−10) + 1 = −8, Σ = 1.2 − 0.7 + 2.1 − 8 = −5.4', () => {
      const s = shapeEpisode(failed, pot(0.9));
      [1.2, -0.7, 2.1, -8].forEach((v, t) => expect(s.perStep[t]).toBeCloseTo(v, 12));
      expect(s.total).toBeCloseTo(-5.4, 12);
    });

    it('potentials below the floor are clamped to it (the floor is Φ\'s bottom)', () => {
      // [−3, −12 → −10, −3, −1, −0.5] truncated: F = 7·(−1), 7, 2, 0.5 → 2.5, as unclamped (telescoping).
      const s = shapeEpisode({ ...failed, potentials: [-3, -12, -3, -1, -0.5], terminated: false, truncated: true }, pot(1));
      [-7, 7, 2, 0.5].forEach((v, t) => expect(s.perStep[t]).toBeCloseTo(v, 12));
    });

    it('a failed episode with potentials but no floor is an error, not a silent reward for dying', () => {
      expect(() => shapeEpisode({ ...failed, potentialFloor: undefined }, pot(1))).toThrow(/potentialFloor/);
    });

    it('no failure scores above an episode still trying: 2,000 random pairs of episodes from one start (γ = 1)', () => {
      // Φ in [floor, 0]; outcome weight 0, so the potential term alone ranks them.
      let seed = 12345;
      const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      const infos = (T: number) => Array.from({ length: T }, () => ({}));
      for (let i = 0; i < 2000; i++) {
        const floor = -1 - Math.floor(rand() * 30);
        const phi0 = floor * rand();
        const walk = (T: number) => [phi0, ...Array.from({ length: T }, () => floor * rand())];
        const T1 = 1 + Math.floor(rand() * 10);
        const T2 = 1 + Math.floor(rand() * 10);
        const dead = shapeEpisode({ rewards: new Array(T1).fill(0), infos: infos(T1), terminated: true, truncated: false, policyTokens: T1, potentials: walk(T1), potentialFloor: floor }, pot(1));
        const tries = shapeEpisode({ rewards: new Array(T2).fill(0), infos: infos(T2), terminated: false, truncated: true, policyTokens: T2, potentials: walk(T2), potentialFloor: floor }, pot(1));
        expect(dead.total).toBeLessThanOrEqual(tries.total + 1e-12);
      }
    });

    it('missing or miscounted potentials are an error', () => {
      expect(() => shapeEpisode(ep, pot(1))).toThrow(/5 potentials/);
      expect(() => shapeEpisode({ ...ep, potentials: [0, 0] }, pot(1))).toThrow(/need 5 potentials/);
    });

    it('with weight 0 the raw value is still reported, and adds nothing', () => {
      const s = shapeEpisode(base, pot(1, 0));
      expect(s.raw.potential).toBeCloseTo(3, 12);
      expect(s.terms.potential).toBe(0);
      expect(s.total).toBe(0);
    });
  });

  it('rejects mismatched infos', () => {
    expect(() => shapeEpisode({ ...ep, infos: [] }, cfg)).toThrow(/infos/);
  });
});

describe('progressive schedule', () => {
  const base: ShapingConfig = { ...DEFAULT_SHAPING, format: { weight: 0.2 } };
  const sched: ShapingSchedule = {
    stages: [
      { name: 'A', weights: { progress: 0.7, outcome: 0.3 }, advance: { successRate: { atLeast: 0.5, forIterations: 2 }, minIterations: 3 } },
      { name: 'B', weights: { progress: 0.3, outcome: 0.7 }, advance: { afterIterations: 2 } },
      { name: 'C', weights: { progress: 0, outcome: 1 } },
    ],
  };
  const run = (s: ShapingSchedule, rates: number[]) => {
    let st = SCHEDULE_START;
    return rates.map((successRate) => {
      const r = stepSchedule(s, st, { successRate }, base);
      st = r.state;
      return r;
    });
  };

  it('success threshold with a minimum stay, then an iteration count, then stays in the last stage', () => {
    // A: streak reaches 2 at iteration 2 but minIterations 3 holds it until iteration 3.
    // B: 2 iterations. C: forever.
    const steps = run(sched, [0.6, 0.6, 0.6, 0, 0, 1, 1, 1]);
    expect(steps.map((s) => s.name)).toEqual(['A', 'A', 'B', 'B', 'C', 'C', 'C', 'C']);
    expect(steps.map((s) => s.advanced)).toEqual([false, false, true, false, true, false, false, false]);
    // Stage weights override the base; untouched terms keep it (format 0.2).
    expect(steps[0].weights).toEqual({ outcome: 0.3, progress: 0.7, format: 0.2, toolCost: 0, length: 0, potential: 0 });
    expect(steps[7].weights.outcome).toBe(1);
    expect(steps[7].weights.progress).toBe(0);
  });

  it('hysteresis: a dip below the threshold resets the streak', () => {
    const s: ShapingSchedule = { stages: [{ ...sched.stages[0], advance: { successRate: { atLeast: 0.5, forIterations: 2 } } }, sched.stages[2]] };
    // streaks 1, 0, 1, 2 -> advances on the 4th iteration only.
    expect(run(s, [0.6, 0.4, 0.6, 0.6]).map((x) => x.name)).toEqual(['A', 'A', 'A', 'C']);
  });

  it('the seed-002 preset is a valid schedule going early -> middle -> late', () => {
    expect(parseShapingSchedule(PROGRESSIVE_SCHEDULE).ok).toBe(true);
    const names = run(PROGRESSIVE_SCHEDULE, Array(60).fill(0.9)).map((x) => x.name);
    // Early: ≥ 0.5 from the start, but at least 5 iterations -> leaves after iteration 5.
    // Middle: ≥ 0.8 for 3 running -> leaves after iteration 8.
    expect(names.slice(0, 9)).toEqual(['early', 'early', 'early', 'early', 'middle', 'middle', 'middle', 'late', 'late']);
  });
});

describe('shaping validation', () => {
  it('messages name the field', () => {
    const r = parseShapingConfig({ format: { weight: -1 }, tooolCost: { weight: 1 } });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.messages).toContain('format.weight: must be ≥ 0 (penalties are already negative; the weight is a magnitude)');
      expect(r.messages).toContain('tooolCost: unknown field');
    }
    const ok = parseShapingConfig({ length: { weight: 0.01, freeTokens: 64 } });
    expect(ok.ok && ok.config.length).toEqual({ weight: 0.01, freeTokens: 64 });
    expect(ok.ok && ok.config.outcome.weight).toBe(1);
  });

  it('schedule rules', () => {
    const bad = parseShapingSchedule({ stages: [{ name: 'a', weights: { outcome: 1 }, advance: {} }, { name: 'b', weights: {}, advance: { afterIterations: 3 } }] });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.messages).toEqual(['stages.0.advance: needs afterIterations or successRate (or leave advance out on the last stage)']);
    const last = parseShapingSchedule({ stages: [{ name: 'b', weights: {}, advance: { afterIterations: 3 } }] });
    expect(!last.ok && last.messages).toEqual(['stages.0.advance: the last stage has nowhere to advance to; remove it']);
    const term = parseShapingSchedule({ stages: [{ name: 'a', weights: { sucess: 1 } }] });
    expect(!term.ok && term.messages).toEqual(['stages.0.weights.sucess: unknown field']);
  });
});
