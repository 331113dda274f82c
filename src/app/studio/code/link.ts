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

/**
 * True for a Train link whose env is a code env (the Train view's own link while it trains one,
 * or a copy of it): its module is in `env.kwargs.code`, so it opens in the Code tab like a code
 * link, to be reviewed and run there, never validated (loaded) on the way in.
 */
export function isTrainCodeLink(hash: string): boolean {
  return /(^#?|&)view=train(&|$)/.test(hash) && /(^#?|&)env\.id=code(\/|%2F)/i.test(hash);
}

/** What a hash says: not a code link, a code link without code, its code, or why it cannot be read. */
export function readCodeLink(hash: string): { kind: 'none' } | { kind: 'empty' } | { kind: 'code'; code: string } | { kind: 'bad'; message: string } {
  const train = isTrainCodeLink(hash);
  if (!train && (!/(^#?|&)view=studio(&|$)/.test(hash) || !/(^#?|&)tab=code(&|$)/.test(hash))) return { kind: 'none' };
  const m = train ? /[&?]env\.kwargs\.code=([^&]*)/.exec(hash) : /[&?]code=([^&]*)/.exec(hash);
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
