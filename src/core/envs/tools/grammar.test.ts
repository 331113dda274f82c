/**
 * Every tool env's action grammar against its expert and against random masked sampling: the
 * expert's every action is a complete alternative whose tokens decode through the mask, and an
 * agent that samples only unmasked tokens never writes a malformed call.
 */
import { describe, expect, it } from 'vitest';
import { EOA, VOCAB, VOCAB_SIZE, encode } from '../../text/codec.ts';
import { matcherFor, maskHas } from '../../text/grammar.ts';
import { Rng } from '../../util/rng.ts';
import type { ToolEnv } from '../types.ts';
import { makeCalculator, makeFlakyApi, makeKvLookup, makeMemory } from './index.ts';

const ENVS: [string, () => ToolEnv][] = [
  ['calculator', () => makeCalculator()],
  ['calculator, 2 terms with division', () => makeCalculator({ terms: 2, division: true, minDigits: 1, maxDigits: 3 })],
  ['kv-lookup, 2 hops', () => makeKvLookup()],
  ['kv-lookup, 3 hops', () => makeKvLookup({ hops: 3, teams: 6 })],
  ['flaky-api', () => makeFlakyApi()],
  ['flaky-api, 3 keys, often failing', () => makeFlakyApi({ keys: 3, failureProb: 0.6, maxTurns: 12 })],
  ['memory', () => makeMemory()],
  ['memory without notes', () => makeMemory({ memoryTools: false })],
];

describe.each(ENVS)('%s: action grammar', (_name, make) => {
  it('accepts every expert action, token by token through the mask, over 200 seeds', () => {
    const env = make();
    let actions = 0;
    for (let seed = 0; seed < 200; seed++) {
      env.reset({ seed });
      for (;;) {
        const a = env.expertAction!();
        if (a === null) break;
        const m = matcherFor(env.actionGrammar!());
        expect(m.accepts(a), `seed ${seed}: ${a}`).toBe(true);
        let text = '';
        for (const id of encode(a)) {
          expect(maskHas(m.mask(text), 0, id), `seed ${seed}: ${JSON.stringify(VOCAB[id])} after ${JSON.stringify(text)}`).toBe(true);
          text += VOCAB[id];
        }
        expect(maskHas(m.mask(text), 0, EOA)).toBe(true);
        actions++;
        const r = env.step(a);
        expect(r.info.malformed).toBe(false);
        if (r.terminated || r.truncated) {
          expect(r.info.success).toBe(true);
          break;
        }
      }
    }
    expect(actions).toBeGreaterThan(200);
  });

  it('an agent sampling uniformly among unmasked tokens never writes a malformed call, within a 24-token budget', () => {
    const env = make();
    const rng = new Rng(7);
    let steps = 0;
    for (let seed = 0; seed < 100; seed++) {
      env.reset({ seed });
      for (let done = false; !done; ) {
        const m = matcherFor(env.actionGrammar!());
        let text = '';
        for (let used = 0; ; used++) {
          // The loop's budget: 24 tokens per action, <eoa> included (a 25th would be a forced end).
          expect(used).toBeLessThan(24);
          const bits = m.mask(text, 24 - used);
          const allowed: number[] = [];
          for (let v = 0; v < VOCAB_SIZE; v++) if (maskHas(bits, 0, v)) allowed.push(v);
          expect(allowed.length, `nothing allowed after ${JSON.stringify(text)}`).toBeGreaterThan(0);
          const id = rng.choice(allowed);
          if (id === EOA) break;
          text += VOCAB[id];
        }
        const r = env.step(text);
        steps++;
        expect(r.info.malformed, `seed ${seed}: ${text} -> ${r.obs.text}`).toBe(false);
        done = r.terminated || r.truncated;
      }
    }
    expect(steps).toBeGreaterThan(100);
  });
});
