/**
 * Code envs saved in this browser (the runs database's `designs` table, kind 'code', beside the
 * saved maps) and exported as `.js`: the pure parts, tested without a browser.
 */
import { MAX_CODE_CHARS } from '../../../core/envs/code/contract.ts';

/** The title a module declares (`title: '…'` in its env export), for names; null when none is found. */
export function declaredTitle(code: string): string | null {
  const m = /\btitle\s*:\s*(['"`])((?:(?!\1).){1,80})\1/.exec(code);
  return m ? m[2] : null;
}

/** The name a saved code env is listed under: its checked title, else its declared one, else "Untitled code env". */
export function savedName(code: string, checkedTitle: string | null): string {
  return checkedTitle ?? declaredTitle(code) ?? 'Untitled code env';
}

/** A `.js` file name from an env's name: lower-case words joined by dashes. */
export function codeFileName(name: string): string {
  return `${name.toLowerCase().replace(/\(code\)/g, '').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'env'}.js`;
}

/** A saved record's data as code, or why it cannot be opened (records are checked on load, not trusted). */
export function readSavedCode(data: unknown): { code: string } | { problem: string } {
  const code = typeof data === 'object' && data !== null ? (data as { code?: unknown }).code : undefined;
  if (typeof code !== 'string') return { problem: 'it holds no module source' };
  if (code.length > MAX_CODE_CHARS) return { problem: `its module has ${code.length} characters, over the ${MAX_CODE_CHARS} limit` };
  return { code };
}
