import { describe, expect, it } from 'vitest';
import { BOS, encode, EOA, OBS } from '../../core/text/codec.ts';
import { batchAbsAdvantage, channelRange, channelValue, legendStops, meanOver, toTranscript, tokenColor, tokenInk } from './tokens.ts';

/** A hand-built two-turn calculator episode: task, calc(...), result, answer(...), verdict. */
function episode(opts: { cutLastReply?: boolean } = {}) {
  const spans: [number[], 0 | 1][] = [
    [[BOS, OBS, ...encode('2+2?')], 0],
    [[...encode('calc(2+2)'), EOA], 1],
    [[OBS, ...encode('result: 4')], 0],
    [[...encode('answer(4)'), EOA], 1],
  ];
  if (!opts.cutLastReply) spans.push([[OBS, ...encode('ok')], 0]);
  const tokens = spans.flatMap(([t]) => t);
  const lossMask = Uint8Array.from(spans.flatMap(([t, m]) => t.map(() => m)));
  // Env tokens get junk log-probs/entropies: ranges must ignore them.
  const logprobs = Float32Array.from(lossMask, (m, i) => (m ? -0.1 * (i % 5) : -9));
  const entropies = Float32Array.from(lossMask, (m, i) => (m ? 0.05 * (i % 4) : 7));
  return {
    tokens: Int32Array.from(tokens),
    lossMask,
    logprobs,
    entropies,
    rewards: Float64Array.from(opts.cutLastReply ? [0] : [0, 1]),
    actions: opts.cutLastReply ? ['calc(2+2)'] : ['calc(2+2)', 'answer(4)'],
    advantage: 0.5,
  };
}

describe('toTranscript', () => {
  it("gives each turn the advantage its tokens were trained with: the per-turn one when sent, else the episode's", () => {
    const ep = episode();
    expect(toTranscript(ep).turns.map((t) => t.advantage)).toEqual([0.5, 0.5]);
    const perTurn = { ...ep, turnAdvantages: Float64Array.from([1.25, -0.75]) };
    const turns = toTranscript(perTurn).turns;
    expect(turns.map((t) => t.advantage)).toEqual([1.25, -0.75]);
    // The heatmap's value on a policy token is its turn's, on an env token 0; the scale spans the batch's largest |advantage|.
    expect(channelValue('advantage', perTurn, turns[1].action[0].pos, turns[1].advantage)).toBe(-0.75);
    expect(channelValue('advantage', perTurn, turns[0].reply[0].pos, turns[0].advantage)).toBe(0);
    expect(batchAbsAdvantage([perTurn, { advantage: -1 }])).toBe(1.25);
  });

  it('splits the context into the task and one turn per policy run, specials named', () => {
    const ep = episode();
    const tr = toTranscript(ep);
    expect(tr.task.map((c) => c.text).join('')).toBe('bosobs2+2?');
    expect(tr.task.slice(0, 2).map((c) => c.special)).toEqual([true, true]);
    expect(tr.turns).toHaveLength(2);
    const [t1, t2] = tr.turns;
    // 'calc(' is one word token, then 4 characters and <eoa>.
    expect(t1.action.map((c) => c.text)).toEqual(['calc(', '2', '+', '2', ')', 'eoa']);
    expect(t1.action.every((c) => c.policy)).toBe(true);
    expect(t1.reply.map((c) => c.text).join('')).toBe('obsresult: 4');
    expect(t1.reply.some((c) => c.policy)).toBe(false);
    expect([t1.reward, t2.reward]).toEqual([0, 1]);
    expect(t2.actionText).toBe('answer(4)');
    // Positions are context indices (the first action token follows the 6 task tokens).
    expect(t1.action[0].pos).toBe(6);
  });

  it('a last action the env never received has no reply and reward NaN', () => {
    const ep = episode({ cutLastReply: true });
    const tr = toTranscript(ep);
    expect(tr.turns[1].reply).toEqual([]);
    expect(tr.turns[1].reward).toBeNaN();
    expect(tr.turns[1].actionText).toBe('');
  });
});

describe('colour scales', () => {
  it('ranges cover policy tokens only; advantage is symmetric over the batch', () => {
    const ep = episode();
    expect(channelRange('logprob', ep, 1)).toEqual({ lo: expect.closeTo(-0.4, 6), hi: 0 });
    expect(channelRange('entropy', ep, 1)).toEqual({ lo: 0, hi: expect.closeTo(0.15, 6) });
    expect(channelRange('advantage', ep, 2)).toEqual({ lo: -2, hi: 2 });
    expect(channelRange('advantage', ep, 0)).toEqual({ lo: -1, hi: 1 }); // no spread: still a scale
    expect(channelRange('mask', ep, 2)).toEqual({ lo: 0, hi: 1 });
    expect(channelValue('advantage', ep, 6)).toBe(0.5);
    expect(channelValue('advantage', ep, 0)).toBe(0); // env token
  });

  it('pale at the neutral end, deep at the far end, clamped beyond; diverging advantage', () => {
    const r = { lo: -2, hi: 0 };
    expect(tokenColor('logprob', 0, r)).toBe('hsl(24 30% 96%)');
    expect(tokenColor('logprob', -2, r)).toBe('hsl(24 85% 46%)');
    expect(tokenColor('logprob', -5, r)).toBe(tokenColor('logprob', -2, r));
    expect(tokenColor('logprob', -1, r)).toBe('hsl(24 58% 71%)');
    const a = { lo: -1, hi: 1 };
    expect(tokenColor('advantage', 1, a)).toBe('hsl(140 85% 46%)');
    expect(tokenColor('advantage', -1, a)).toBe('hsl(0 85% 46%)');
    expect(tokenColor('advantage', 0, a)).toBe('hsl(140 30% 96%)');
    expect(tokenColor('mask', 1, a)).not.toBe(tokenColor('mask', 0, a));
    // Deep orange is light enough that black reads better on it than white (5.2:1 against 3.4:1).
    expect(tokenInk('logprob', -2, r)).toBe('#000');
    expect(tokenInk('logprob', -0.2, r)).toBe('#000');
  });

  it('legend stops run lo → hi through the same colours', () => {
    const stops = legendStops('entropy', { lo: 0, hi: 0.6 }, 4);
    expect(stops.map((s) => s.value)).toEqual([0, expect.closeTo(0.2, 9), expect.closeTo(0.4, 9), 0.6]);
    expect(stops[0].color).toBe(tokenColor('entropy', 0, { lo: 0, hi: 0.6 }));
  });

  it('meanOver averages a per-position array over cells', () => {
    const tr = toTranscript(episode());
    const xs = Float32Array.from({ length: 40 }, (_, i) => i);
    expect(meanOver(tr.turns[0].action, xs)).toBe((6 + 7 + 8 + 9 + 10 + 11) / 6);
    expect(meanOver([], xs)).toBeNaN();
  });

  it('the ink on every heatmap colour reaches WCAG AA contrast (4.5:1)', () => {
    // HSL → sRGB by hue sectors (CSS Color 4), then WCAG luminance: written apart from tokens.ts.
    const rgb = (css: string) => {
      const [h, sp, lp] = css.match(/[\d.]+/g)!.map(Number);
      const s = sp / 100;
      const l = lp / 100;
      const c = (1 - Math.abs(2 * l - 1)) * s;
      const x = c * (1 - Math.abs(((h / 60) % 2) - 1));
      const [r, g, b] = h < 60 ? [c, x, 0] : h < 120 ? [x, c, 0] : h < 180 ? [0, c, x] : h < 240 ? [0, x, c] : h < 300 ? [x, 0, c] : [c, 0, x];
      return [r, g, b].map((v) => v + l - c / 2);
    };
    const lum = (c: number[]) => {
      const [r, g, b] = c.map((v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const ratio = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const cases: [Parameters<typeof tokenColor>[0], { lo: number; hi: number }][] = [['advantage', { lo: -2, hi: 2 }], ['logprob', { lo: -3, hi: 0 }], ['entropy', { lo: 0, hi: 1.5 }]];
    for (const [ch, range] of cases) {
      for (let k = 0; k <= 200; k++) {
        const v = range.lo + ((range.hi - range.lo) * k) / 200;
        const bg = lum(rgb(tokenColor(ch, v, range)));
        const ink = tokenInk(ch, v, range) === '#fff' ? 1 : 0;
        expect(ratio(bg, ink), `${ch} ${v}: ${tokenColor(ch, v, range)} with ${tokenInk(ch, v, range)}`).toBeGreaterThanOrEqual(4.5);
      }
    }
  });
});
