/**
 * Code env links: `#view=studio&tab=code&code=<the module, URI-encoded>`. A link carries code,
 * so it opens read-only under a banner and nothing runs until the person presses Run
 * (CodeEnvPanel). The hash sync then writes the studio's own hash, without the code.
 */
import { MAX_CODE_CHARS } from '../../../core/envs/code/contract.ts';
import { hashPairs } from '../../state/hash.ts';

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
  // Keys are read decoded, as the Train view's parser reads them: `env%2Eid=code%2Fcustom` is the
  // same setting as `env.id=code/custom` and must meet the same banner.
  const { pairs } = hashPairs(hash);
  return pairs.some(([k, v]) => k === 'view' && v === 'train') && pairs.some(([k, v]) => k === 'env.id' && v.startsWith('code/'));
}

/** The raw value of the hash part whose decoded key is `key` (undecodable keys never match). */
function rawValueOf(hash: string, key: string): string | null {
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  for (const part of body.split('&')) {
    const eq = part.indexOf('=');
    let k: string;
    try {
      k = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    } catch {
      continue;
    }
    if (k === key) return eq < 0 ? '' : part.slice(eq + 1);
  }
  return null;
}

/** What a hash says: not a code link, a code link without code, its code, or why it cannot be read. */
export function readCodeLink(hash: string): { kind: 'none' } | { kind: 'empty' } | { kind: 'code'; code: string } | { kind: 'bad'; message: string } {
  const train = isTrainCodeLink(hash);
  if (!train) {
    const { pairs } = hashPairs(hash);
    if (!pairs.some(([k, v]) => k === 'view' && v === 'studio') || !pairs.some(([k, v]) => k === 'tab' && v === 'code')) return { kind: 'none' };
  }
  const raw = rawValueOf(hash, train ? 'env.kwargs.code' : 'code');
  if (raw === null) return { kind: 'empty' };
  let code: string;
  try {
    code = decodeURIComponent(raw);
  } catch {
    return { kind: 'bad', message: 'the link’s code is not valid URI encoding (was it cut off?)' };
  }
  if (code.length > MAX_CODE_CHARS) return { kind: 'bad', message: `the link carries ${code.length} characters of code, over the ${MAX_CODE_CHARS} limit` };
  return { kind: 'code', code };
}
