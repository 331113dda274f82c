import { describe, expect, it } from 'vitest';
import { formatHash, parseHash, parseSeed } from './hash.ts';

describe('URL hash', () => {
  it('reads env, seed and kwargs', () => {
    expect(parseHash('#env=grid/door-key-6x6&seed=7&k.maxSteps=40&k.flaky=true&k.name=a%20b')).toEqual({
      state: { env: 'grid/door-key-6x6', seed: 7, kwargs: { maxSteps: 40, flaky: true, name: 'a b' } },
      problems: [],
    });
  });

  it('round-trips what it writes', () => {
    const s = { env: 'tools/kv-lookup', seed: 4294967295, kwargs: { p: 0.25, tag: 'x&y=z' } };
    const h = formatHash(s);
    expect(h).toBe('#env=tools/kv-lookup&seed=4294967295&k.p=0.25&k.tag=x%26y%3Dz');
    expect(parseHash(h)).toEqual({ state: s, problems: [] });
  });

  it('explains bad seeds and unknown keys instead of throwing', () => {
    const { state, problems } = parseHash('#env=grid/x&seed=-3&colour=red&seed2');
    expect(state).toEqual({ env: 'grid/x', seed: null, kwargs: {} });
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/seed "-3" is not a whole number/);
    expect(problems[1]).toMatch(/unknown setting "colour"/);
  });

  it('names a number too large for a double (1e400) instead of carrying Infinity, which the next link writes as null', () => {
    const { state, problems } = parseHash('#env=grid/empty-5x5&k.maxSteps=1e400&k.p=-2e308');
    expect(state.kwargs).toEqual({});
    expect(problems).toEqual([expect.stringMatching(/k\.maxSteps=1e400 is too large for a number .*; left out/), expect.stringMatching(/k\.p=-2e308 is too large/)]);
  });

  it('survives malformed percent escapes and empty hashes', () => {
    expect(parseHash('').problems).toEqual([]);
    expect(parseHash('#').state.env).toBeNull();
    const bad = parseHash('#env=%E0%A4%A&seed=1');
    expect(bad.state).toEqual({ env: null, seed: 1, kwargs: {} });
    expect(bad.problems[0]).toMatch(/could not decode/);
  });

  it('bounds seeds to uint32', () => {
    expect(parseSeed('4294967296')).toEqual({ error: 'seed 4294967296 is larger than 4294967295' });
    expect(parseSeed(' 12 ')).toEqual({ seed: 12 });
    expect(parseSeed('1e3')).toHaveProperty('error');
  });
});
