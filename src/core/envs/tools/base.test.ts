import { describe, expect, it } from 'vitest';
import { Rng } from '../../util/rng.ts';
import { CHARSET } from '../../text/codec.ts';
import { ACTION_MAX_LENGTH, OBS_MAX_LENGTH, parseCall } from './base.ts';
import type { ToolDef } from './base.ts';
import { makeCalculator } from './calculator.ts';
import { makeKvLookup } from './kvLookup.ts';
import { makeFlakyApi } from './flakyApi.ts';

/** The characters of `s` outside the shared vocabulary ('' when all are inside). */
const outsideVocab = (s: string): string => [...s].filter((ch) => !CHARSET.includes(ch)).join('');

const TOOLS: ToolDef[] = [
  { name: 'calc', signature: 'calc(expression)' },
  { name: 'answer', signature: 'answer(number)' },
];

describe('parseCall', () => {
  it.each([
    ['calc(123*45)', 'calc', '123*45'],
    ['  calc((1+2)*3)\n', 'calc', '(1+2)*3'],
    ['answer(5535)', 'answer', '5535'],
    ['answer()', 'answer', ''],
    ['calc( 1 + 2 )', 'calc', ' 1 + 2 '],
  ])('accepts %j', (action, tool, args) => {
    expect(parseCall(action, TOOLS)).toEqual({ ok: true, call: { tool, args } });
  });

  it.each([
    ['', /empty action; write one tool call: calc\(expression\), answer\(number\)/],
    ['  \n ', /empty action/],
    ['5535', /"5535" is not a tool call; write one of calc\(expression\), answer\(number\)/],
    ['lookup(team red)', /unknown tool "lookup"; the tools here are calc\(expression\), answer\(number\)/],
    ['please calc(1+2)', /unknown tool "please calc"/],
    ['calc (1+2)', /no space allowed between calc and "\("/],
    ['Calc(1+2)', /tool names are lowercase: write calc\(/],
    ['calc(1+2', /missing "\)" to close calc\(/],
    ['calc((1+2)', /missing "\)" to close calc\(/],
    ['calc(1+2) now', /unexpected text after the call: " now"; write one call per turn/],
    ['calc(1) answer(1)', /unexpected text after the call: " answer\(1\)"/],
    ['answer(5)5', /unexpected text after the call: "5"/],
    ['calc(1)\ncalc(2)', /unexpected text after the call: " calc\(2\)"/], // newline shown as a space
    ['x'.repeat(ACTION_MAX_LENGTH + 1), new RegExp(`is ${ACTION_MAX_LENGTH + 1} characters long; the limit is ${ACTION_MAX_LENGTH}`)],
    ['calc(1\u00d72)', /character 7 of the action is outside the vocabulary/],
  ])('rejects %j', (action, msg) => {
    const r = parseCall(action, TOOLS);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toMatch(msg);
      expect(outsideVocab(r.error)).toBe('');
    }
  });

  it('rejects non-text actions with a message instead of throwing', () => {
    for (const a of [undefined, null, 42, {}, ['calc(1)']]) {
      const r = parseCall(a, TOOLS);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toMatch(/the action must be text/);
    }
  });
});

const MAKERS = [
  ['tools/calculator', () => makeCalculator({ maxTurns: 50 })],
  ['tools/kv-lookup', () => makeKvLookup({ maxTurns: 50 })],
  ['tools/flaky-api', () => makeFlakyApi({ maxTurns: 50 })],
] as const;

const JUNK: unknown[] = [
  '',
  '   ',
  'hello',
  'answer',
  'answer(',
  ')(',
  '(((',
  'calc(1+2',
  'lookup(a) lookup(b)',
  'call(k1)x',
  'retry(now)',
  'CALL(k1)',
  'é(1)',
  '\u{1F600}',
  'x'.repeat(500),
  'answer(  )',
  42,
  null,
  undefined,
  { text: 'calc(1)' },
];

describe.each(MAKERS)('%s malformed calls', (_id, make) => {
  it('never throw, consume the turn, and are counted', () => {
    const env = make();
    env.reset({ seed: 3 });
    let count = 0;
    for (const junk of JUNK) {
      const r = env.step(junk as string);
      expect(r.terminated, `${String(junk)} ended the episode`).toBe(false);
      if (r.info.malformed) count++;
      expect(r.info.malformedCount).toBe(count);
      expect(r.info.turn).toBe(env.turnsUsed);
      expect(r.obs.text.startsWith('error: ')).toBe(true);
      expect(r.obs.text.length).toBeLessThanOrEqual(OBS_MAX_LENGTH);
      expect(outsideVocab(r.obs.text)).toBe('');
      expect(r.reward).toBe(0); // malformed calls reach no tool and cost nothing
      expect(r.info.latencyMs).toBe(0);
      expect(r.info.toolCall).toBeUndefined();
    }
    // Every item of JUNK is malformed in every tool env.
    expect(count).toBe(JUNK.length);
    expect(outsideVocab(env.renderText())).toBe('');
    // The expert still solves the task afterwards: the junk changed nothing but the turn count.
    for (let a = env.expertAction(); a !== null; a = env.expertAction()) {
      const r = env.step(a);
      if (r.terminated) {
        expect(r.info.success).toBe(true);
        expect(r.info.malformedCount).toBe(JUNK.length);
      }
    }
  });

  it('survive random vocabulary strings of every length', () => {
    const env = make();
    const rng = new Rng(11);
    for (let ep = 0; ep < 20; ep++) {
      env.reset({ seed: ep });
      for (let t = 0; t < 50; t++) {
        const len = rng.int(0, ACTION_MAX_LENGTH + 10);
        let s = '';
        for (let i = 0; i < len; i++) s += CHARSET[rng.int(0, CHARSET.length)];
        const r = env.step(s);
        expect(outsideVocab(r.obs.text)).toBe('');
        if (r.terminated || r.truncated) break;
      }
    }
  });

  it('throws only on programming errors: stepping before reset or after the end', () => {
    const env = make();
    expect(() => env.step('answer(1)')).toThrow(/before reset/);
    env.reset({ seed: 0 });
    expect(env.step('answer(1)').terminated).toBe(true);
    expect(env.expertAction()).toBeNull();
    expect(() => env.step('answer(1)')).toThrow(/after the episode ended/);
  });
});

describe('turn limit', () => {
  it('truncates exactly at maxTurns, says so in the transcript, and reports success false', () => {
    const env = makeCalculator({ maxTurns: 3 });
    env.reset({ seed: 1 });
    expect(env.step('calc(1+1)').truncated).toBe(false);
    expect(env.step('nonsense').truncated).toBe(false);
    const last = env.step('calc(2+2)');
    expect(last).toMatchObject({ terminated: false, truncated: true, obs: { text: 'result: 4' }, info: { success: false } });
    const msgs = env.frame().messages;
    expect(msgs.at(-1)).toEqual({ role: 'result', text: 'out of turns (3 of 3 used). the answer was 5421353.' });
    expect(msgs.map((m) => m.role)).toEqual(['task', 'agent', 'tool', 'agent', 'error', 'agent', 'tool', 'result']);
  });
});

describe('kwargs', () => {
  it('are checked with messages that name the env and the kwarg', () => {
    expect(() => makeCalculator({ turns: 3 })).toThrow(/tools\/calculator: unknown kwarg "turns"; known: maxTurns/);
    // Names every object inherits are unknown kwargs too, not a call of Object.prototype's members.
    for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      expect(() => makeCalculator(JSON.parse(`{"${key}": 1}`) as Record<string, unknown>)).toThrow(`tools/calculator: unknown kwarg "${key}"; known: maxTurns`);
    }
    expect(() => makeCalculator({ maxTurns: 0 })).toThrow(/kwarg maxTurns must be a whole number in 1..100, got 0/);
    expect(() => makeCalculator({ division: 'yes' })).toThrow(/kwarg division must be true or false/);
    expect(() => makeCalculator({ minDigits: 5, maxDigits: 3 })).toThrow(/minDigits 5 > maxDigits 3/);
    expect(() => makeCalculator({ terms: 4, maxDigits: 6, division: true })).toThrow(/the action limit is 80/);
    expect(() => makeKvLookup({ hops: 4 })).toThrow(/kwarg hops must be a whole number in 2..3/);
    expect(() => makeFlakyApi({ failureProb: 1.5 })).toThrow(/kwarg failureProb must be a number in \[0, 1\]/);
    expect(() => makeFlakyApi({ callCost: Number.NaN })).toThrow(/callCost/);
  });
});
