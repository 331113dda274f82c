import { describe, expect, it } from 'vitest';
import { envIds, makeEnv } from './index.ts';
import { checkEnv } from './checkEnv.ts';
import { CHARSET } from '../text/codec.ts';

const EXPECTED = [
  'grid/empty-5x5',
  'grid/empty-8x8',
  'grid/four-rooms',
  'grid/door-key-6x6',
  'grid/lava-crossing-9x9',
  'grid/memory',
  'grid/switch-door',
  'grid/custom',
  'tools/calculator',
  'tools/kv-lookup',
  'tools/flaky-api',
  'tools/memory',
];

describe('env registry', () => {
  it('registers the whole suite', () => {
    expect(envIds().sort()).toEqual([...EXPECTED].sort());
  });

  it('names unknown envs and lists the known ones', () => {
    expect(() => makeEnv('grid/nope')).toThrow(/unknown env "grid\/nope".*grid\/empty-5x5/);
  });

  describe.each(EXPECTED)('%s', (id) => {
    it('passes checkEnv', () => {
      expect(checkEnv(() => makeEnv(id), { seeds: [0, 3, 99] })).toEqual([]);
    });

    it('has a spec a person can read, and text inside the shared vocabulary', () => {
      const env = makeEnv(id);
      expect(env.spec.id).toBe(id);
      expect(env.spec.description.length).toBeGreaterThan(40);
      const { obs } = env.reset({ seed: 5 });
      const text = (obs as { text: string }).text;
      for (const ch of text) expect(CHARSET).toContain(ch);
      for (const ch of env.renderText()) expect(CHARSET).toContain(ch);
    });
  });
});
