import { describe, expect, it } from 'vitest';
import { editsForVersions, lineChanges, missingVersionProblem, rewardCodeHash, rewardVersions, versionAt, versionMarkers, versionsForResume, withCheckpointVersions } from './versions.ts';

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

describe('reward-code versions on resume and import', () => {
  const A = 'export const a = () => 1;';
  const B = 'export const b = () => 2;';
  const C = 'export const c = () => 3;';
  const v = [
    { version: 1, iteration: 0, code: A },
    { version: 2, iteration: 4, code: B },
    { version: 3, iteration: 9, code: C },
  ];

  it('a resume from iteration k keeps the versions applied at or before k; the last of them scores on', () => {
    expect(versionsForResume(v, 3)).toEqual({ kept: [v[0]], inForce: v[0] });
    // Applied at 4 = scores iteration 4 (0-based) on: a checkpoint after 4 iterations trains with it.
    expect(versionsForResume(v, 4)).toEqual({ kept: [v[0], v[1]], inForce: v[1] });
    expect(versionsForResume(v, 20)).toEqual({ kept: v, inForce: v[2] });
    expect(versionsForResume([], 5)).toEqual({ kept: [], inForce: null });
    // Code first applied mid-run: nothing scores before it.
    expect(versionsForResume([{ version: 1, iteration: 6, code: B }], 5)).toEqual({ kept: [], inForce: null });
  });

  it('the rows before a checkpoint must find the version that scored them among the run\'s', () => {
    const rows = [
      { iteration: 0, 'reward/version': 1 },
      { iteration: 4, 'reward/version': 2 },
      { iteration: 5, 'reward/version': 2 },
    ];
    expect(missingVersionProblem(v, rows)).toBeNull();
    expect(missingVersionProblem(v.slice(0, 1), rows)).toBe('iteration 4 was scored by reward code v2, but the run carries no code for v2 (it carries v1); resuming would train without it');
    expect(missingVersionProblem([], rows)).toBe('iteration 0 was scored by reward code v1, but the run carries no code for v1 (it carries none at all); resuming would train without it');
    expect(missingVersionProblem([v[0], { ...v[1], iteration: 5 }], rows)).toBe('iteration 4 was scored by reward code v2, but the run says v2 took effect only at iteration 5');
    // Rows without user terms (no key, or version 0) need nothing.
    expect(missingVersionProblem([], [{ iteration: 0 }, { iteration: 1, 'reward/version': 0 }])).toBeNull();
  });

  it('versions read back as the live edits that re-create them, and a list that does not fit the start code is refused', () => {
    expect(editsForVersions(A, v)).toEqual([
      { iteration: 4, path: 'reward.code', value: B },
      { iteration: 9, path: 'reward.code', value: C },
    ]);
    expect(rewardVersions(A, editsForVersions(A, v)!)).toEqual(v);
    // A run that started without code: v1 is an applied edit.
    expect(editsForVersions('', [{ version: 1, iteration: 3, code: B }])).toEqual([{ iteration: 3, path: 'reward.code', value: B }]);
    expect(editsForVersions(A, [])).toBeNull(); // the start code is v1
    expect(editsForVersions(B, v)).toBeNull(); // v1 is not the start code
    expect(editsForVersions(A, [v[0], { ...v[1], version: 3 }])).toBeNull(); // numbered out of order
    expect(editsForVersions(A, [v[0], v[2], { ...v[1], version: 3 }])).toBeNull(); // iterations out of order
  });
});

describe("a run's versions with its checkpoint's", () => {
  const v1 = { version: 1, iteration: 0, code: 'a' };
  const v2 = { version: 2, iteration: 4, code: 'b' };
  it('the longer list wins where they agree; a disagreement is named; no checkpoint list leaves the run’s', () => {
    expect(withCheckpointVersions([v1], [v1, v2])).toEqual([v1, v2]);
    expect(withCheckpointVersions([v1, v2], [v1])).toEqual([v1, v2]);
    expect(withCheckpointVersions([v1], undefined)).toEqual([v1]);
    expect(withCheckpointVersions([], [v1])).toEqual([v1]);
    expect(withCheckpointVersions([v1, { ...v2, code: 'c' }], [v1, v2])).toMatch(/the checkpoint's reward-code v2 \(from iteration 4\) differs from the run's v2/);
  });
});
