import { describe, expect, it } from 'vitest';
import emptyPreset from '../../../../presets/grid-empty-8x8-grpo.json';
import { draftFromPreset, formatTrainHash, loadPresets } from '../../train/config.ts';
import { codeEnvLink, isTrainCodeLink, readCodeLink } from './link.ts';

describe('code env links', () => {
  it('round-trips code with every awkward character', () => {
    const code = "export const env = { title: 'a & b = c?' };\n// 100% #hash ü\n";
    expect(readCodeLink(codeEnvLink(code))).toEqual({ kind: 'code', code });
  });
  it('tells a plain hash, an empty code link and a broken one apart', () => {
    expect(readCodeLink('#view=train')).toEqual({ kind: 'none' });
    expect(readCodeLink('#view=studio&tab=map&map=###')).toEqual({ kind: 'none' });
    expect(readCodeLink('#tab=code&view=studio&code=1')).toEqual({ kind: 'code', code: '1' });
    expect(readCodeLink('#view=studio&tab=code')).toEqual({ kind: 'empty' });
    expect(readCodeLink('#view=studio&tab=code&code=%E0%A4%A')).toMatchObject({ kind: 'bad', message: expect.stringMatching(/not valid URI encoding/) });
    expect(readCodeLink(`#view=studio&tab=code&code=${'x'.repeat(70_000)}`)).toMatchObject({ kind: 'bad', message: expect.stringMatching(/over the 65536 limit/) });
  });
  it("reads the Train view's own link on a code env (a reload, a copied link) as a code link", () => {
    const p = loadPresets([emptyPreset]).presets[0];
    const base = draftFromPreset(p, 'wasm');
    const code = "export const env = { title: 'a & b' };\n// 100% #x\n";
    const hash = formatTrainHash(p.id, base, { ...base, env: { id: 'code/custom', kwargs: { code } } });
    expect(isTrainCodeLink(hash)).toBe(true);
    expect(readCodeLink(hash)).toEqual({ kind: 'code', code });
    expect(isTrainCodeLink(formatTrainHash(p.id, base, base))).toBe(false);
  });
  it('reads a Train link whose keys are percent-encoded as the code link it is (the Train parser decodes keys, so it would load the module unreviewed)', () => {
    const code = 'export const env = {};';
    for (const hash of [
      `#view=train&env%2Eid=code/custom&env.kwargs.code=${encodeURIComponent(code)}`,
      `#view=train&env%2eid=code%2Fcustom&env%2Ekwargs%2Ecode=${encodeURIComponent(code)}`,
      `#%76iew=train&env.id=code/custom&env.kwargs.code=${encodeURIComponent(code)}`,
    ]) {
      expect(isTrainCodeLink(hash), hash).toBe(true);
      expect(readCodeLink(hash), hash).toEqual({ kind: 'code', code });
    }
    expect(isTrainCodeLink('#view=train&env%2Eid=grid/empty')).toBe(false);
  });
});
