import { describe, expect, it } from 'vitest';
import { codeEnvLink, readCodeLink } from './link.ts';

describe('code env links', () => {
  it('round-trips code with every awkward character', () => {
    const code = "export const env = { title: 'a & b = c?' };\n// 100% #hash ü\n";
    expect(readCodeLink(codeEnvLink(code))).toEqual({ kind: 'code', code });
  });
  it('tells a plain hash, an empty code link and a broken one apart', () => {
    expect(readCodeLink('#view=train')).toEqual({ kind: 'none' });
    expect(readCodeLink('#studio-code')).toEqual({ kind: 'empty' });
    expect(readCodeLink('#studio-code&code=%E0%A4%A')).toMatchObject({ kind: 'bad', message: expect.stringMatching(/not valid URI encoding/) });
    expect(readCodeLink(`#studio-code&code=${'x'.repeat(70_000)}`)).toMatchObject({ kind: 'bad', message: expect.stringMatching(/over the 65536 limit/) });
  });
});
