import { describe, expect, it } from 'vitest';
import { allOrRelease } from './allOrRelease.ts';

const part = (name: string, freed: string[]) => ({ name, release: async () => void freed.push(name) });

describe('allOrRelease', () => {
  it('resolves every part in order when all build', async () => {
    const freed: string[] = [];
    const [a, b, c] = await allOrRelease([Promise.resolve(part('a', freed)), Promise.resolve(part('b', freed)), Promise.resolve(null)]);
    expect([a.name, b.name, c]).toEqual(['a', 'b', null]);
    expect(freed).toEqual([]);
  });

  it('releases the parts that were built when one fails, then rethrows the first failure', async () => {
    const freed: string[] = [];
    const failing = Promise.reject(new Error('learner: out of GPU memory'));
    const later = Promise.reject(new Error('second failure'));
    await expect(allOrRelease([Promise.resolve(part('decoder', freed)), failing, Promise.resolve(null), Promise.resolve(part('policy', freed)), later])).rejects.toThrow('learner: out of GPU memory');
    expect(freed.sort()).toEqual(['decoder', 'policy']);
    const closed: string[] = [];
    const pool = { close: async () => void closed.push('pool') };
    await expect(allOrRelease([Promise.resolve(pool), Promise.reject(new Error('x'))])).rejects.toThrow('x');
    expect(closed).toEqual(['pool']);
  });

  it('a release that fails does not hide the build failure', async () => {
    const bad = { release: async () => Promise.reject(new Error('release failed')) };
    await expect(allOrRelease([Promise.resolve(bad), Promise.reject(new Error('build failed'))])).rejects.toThrow('build failed');
  });
});
