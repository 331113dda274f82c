/**
 * Reward-code versions of a run and the hash that names a reward code (pure: no DOM, React,
 * workers or onnxruntime; runs in Node and the browser alike).
 *
 * A run records which code scored which iteration without a store of its own: its config holds
 * the code it started with (`reward.code`), and each code applied mid-run is a live edit
 * `{ iteration, path: 'reward.code', value: code }` (scoring from that 0-based iteration on).
 * Saved runs, run files and their imports keep both, so old files need nothing new.
 */

/** One code version of a run: it scored iterations from `iteration` (0-based) on. */
export interface CodeVersion {
  /** 1, 2, …: the order it was applied in. */
  version: number;
  /** First iteration (0-based) it scored. */
  iteration: number;
  /** The module's source ('' = user terms turned off). */
  code: string;
}

/** The live edits of a run, as saved with it (only `reward.code` ones matter here). */
export interface CodeEdit {
  iteration: number;
  path: string;
  value: unknown;
}

/**
 * The versions a run went through, oldest first: v1 is the code it started with (when not
 * empty), each applied code the next version. Empty when the run never had user terms.
 */
export function rewardVersions(startCode: string, liveEdits: readonly CodeEdit[]): CodeVersion[] {
  const out: CodeVersion[] = [];
  if (startCode.trim() !== '') out.push({ version: 1, iteration: 0, code: startCode });
  for (const e of liveEdits) {
    if (e.path !== 'reward.code' || typeof e.value !== 'string') continue;
    out.push({ version: out.length + 1, iteration: e.iteration, code: e.value });
  }
  return out;
}

/** The version that scored 0-based `iteration`, or null before the first. */
export function versionAt(versions: readonly CodeVersion[], iteration: number): CodeVersion | null {
  let found: CodeVersion | null = null;
  for (const v of versions) if (v.iteration <= iteration) found = v;
  return found;
}

/** A chart marker per version: x is the chart's iteration axis (iterations done, 1-based), label 'v2'. */
export function versionMarkers(versions: readonly { version: number; iteration: number }[]): { x: number; label: string }[] {
  return versions.map((v) => ({ x: v.iteration + 1, label: `v${v.version}` }));
}

/** Lines added and removed between two codes, for the diff's caption (lines matched as a multiset: cheap, order ignored). */
export function lineChanges(before: string, after: string): { added: number; removed: number } {
  const count = new Map<string, number>();
  for (const l of before ? before.split('\n') : []) count.set(l, (count.get(l) ?? 0) + 1);
  let added = 0;
  for (const l of after ? after.split('\n') : []) {
    const n = count.get(l) ?? 0;
    if (n > 0) count.set(l, n - 1);
    else added++;
  }
  let removed = 0;
  for (const n of count.values()) removed += n;
  return { added, removed };
}

/** Hex digits of a reward-code hash: 12 (48 bits) tells a person's versions apart at a glance. */
export const CODE_HASH_CHARS = 12;

/**
 * The first CODE_HASH_CHARS hex digits of SHA-256 over the code's UTF-8 bytes, or null for no
 * code. Line endings are normalised to \n first, so a file saved on Windows hashes like the same
 * code typed in the browser (Web Crypto: `crypto.subtle` in browsers, workers and Node ≥ 19).
 */
export async function rewardCodeHash(code: string): Promise<string | null> {
  if (code.trim() === '') return null;
  const bytes = new TextEncoder().encode(code.replace(/\r\n?/g, '\n'));
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  let hex = '';
  for (const b of digest) hex += b.toString(16).padStart(2, '0');
  return hex.slice(0, CODE_HASH_CHARS);
}
