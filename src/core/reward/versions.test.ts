import { describe, expect, it } from 'vitest';
import { lineChanges, rewardCodeHash, rewardVersions, versionAt, versionMarkers } from './versions.ts';

describe('reward-code versions of a run', () => {
  it('reads v1 from the start code and each reward.code live edit as the next version', () => {
    const edits = [
      { iteration: 3, path: 'algo.lr', value: 0.01 },
      { iteration: 5, path: 'reward.code', value: 'export const b = () => 2;' },
      { iteration: 9, path: 'reward.code', value: 'export const c = () => 3;' },
    ];
    const v = rewardVersions('export const a = () => 1;', edits);
    expect(v).toEqual([
      { version: 1, iteration: 0, code: 'export const a = () => 1;' },
      { version: 2, iteration: 5, code: 'export const b = () => 2;' },
      { version: 3, iteration: 9, code: 'export const c = () => 3;' },
    ]);
    expect(versionAt(v, 0)?.version).toBe(1);
    expect(versionAt(v, 4)?.version).toBe(1);
    expect(versionAt(v, 5)?.version).toBe(2);
    expect(versionAt(v, 100)?.version).toBe(3);
    expect(versionMarkers(v)).toEqual([
      { x: 1, label: 'v1' },
      { x: 6, label: 'v2' },
      { x: 10, label: 'v3' },
    ]);
  });

  it('starts at the first applied code when the run began without any, and ignores other edits', () => {
    const v = rewardVersions('  \n', [{ iteration: 4, path: 'reward.code', value: 'export const x = () => 0;' }, { iteration: 6, path: 'reward.code', value: 42 }]);
    expect(v).toEqual([{ version: 1, iteration: 4, code: 'export const x = () => 0;' }]);
    expect(versionAt(v, 3)).toBeNull();
    expect(rewardVersions('', [])).toEqual([]);
  });
});

describe('diff caption', () => {
  it('counts lines added and removed between two versions', () => {
    expect(lineChanges('a\nb\nc', 'a\nB\nc\nd')).toEqual({ added: 2, removed: 1 });
    expect(lineChanges('', 'x\ny')).toEqual({ added: 2, removed: 0 });
    expect(lineChanges('same\n', 'same\n')).toEqual({ added: 0, removed: 0 });
  });
});

describe('reward-code hash', () => {
  it('is the first 12 hex digits of SHA-256 over the UTF-8 code', async () => {
    // FIPS 180-2's test vector: SHA-256('abc') = ba7816bf8f01cfea…
    expect(await rewardCodeHash('abc')).toBe('ba7816bf8f01');
    // Non-ASCII code hashes its UTF-8 bytes (the digest from node:crypto's createHash, written out).
    expect(await rewardCodeHash('export const stepCost = (step) => -0.01; // é ✓\n')).toBe('c310b9eccc61');
  });

  it('ignores line-ending style, tells codes apart, and is null without code', async () => {
    expect(await rewardCodeHash('export const a = () => 1;\r\nexport const b = () => 2;\r\n')).toBe(await rewardCodeHash('export const a = () => 1;\nexport const b = () => 2;\n'));
    expect(await rewardCodeHash('export const a = () => 1;')).not.toBe(await rewardCodeHash('export const a = () => 2;'));
    expect(await rewardCodeHash('')).toBeNull();
    expect(await rewardCodeHash('  \n')).toBeNull();
  });
});
