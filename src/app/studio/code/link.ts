/**
 * Code env links: `#view=studio&tab=code&code=<the module, URI-encoded>`. A link carries code,
 * so it opens read-only under a banner and nothing runs until the person presses Run
 * (CodeEnvPanel). The hash sync then writes the studio's own hash, without the code.
 */
import { MAX_CODE_CHARS } from '../../../core/envs/code/contract.ts';

export const CODE_LINK_PREFIX = '#view=studio&tab=code';

/** The hash of a link that opens `code` in the Code tab. */
export function codeEnvLink(code: string): string {
  return `${CODE_LINK_PREFIX}&code=${encodeURIComponent(code)}`;
}

/** What a hash says: not a code link, a code link without code, its code, or why it cannot be read. */
export function readCodeLink(hash: string): { kind: 'none' } | { kind: 'empty' } | { kind: 'code'; code: string } | { kind: 'bad'; message: string } {
  if (!/(^#?|&)view=studio(&|$)/.test(hash) || !/(^#?|&)tab=code(&|$)/.test(hash)) return { kind: 'none' };
  const m = /[&?]code=([^&]*)/.exec(hash);
  if (!m) return { kind: 'empty' };
  let code: string;
  try {
    code = decodeURIComponent(m[1]);
  } catch {
    return { kind: 'bad', message: 'the link’s code is not valid URI encoding (was it cut off?)' };
  }
  if (code.length > MAX_CODE_CHARS) return { kind: 'bad', message: `the link carries ${code.length} characters of code, over the ${MAX_CODE_CHARS} limit` };
  return { kind: 'code', code };
}
