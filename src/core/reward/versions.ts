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

/**
 * The live edits that re-create `versions` over a run whose config starts with `startCode`:
 * what an importer stores when a file carries its versions but no `reward.code` edits (a CLI
 * folder). Null when the versions do not fit the start code: v1 at iteration 0 must be that
 * code, numbered 1, 2, … in order of iteration.
 */
export function editsForVersions(startCode: string, versions: readonly CodeVersion[]): CodeEdit[] | null {
  const startsWithCode = startCode.trim() !== '';
  const edits: CodeEdit[] = [];
  for (let i = 0; i < versions.length; i++) {
    const v = versions[i];
    if (v.version !== i + 1 || (i > 0 && v.iteration < versions[i - 1].iteration)) return null;
    if (i === 0 && startsWithCode) {
      if (v.iteration !== 0 || v.code !== startCode) return null;
      continue;
    }
    edits.push({ iteration: v.iteration, path: 'reward.code', value: v.code });
  }
  if (startsWithCode && versions.length === 0) return null;
  return edits;
}

/**
 * What a run resumed from its checkpoint at iteration `k` trains with: the versions it keeps
 * (those applied at or before k: a later one scored only rows that are trained again) and the
 * one that scores iteration k on (null: no user terms).
 */
export function versionsForResume(versions: readonly CodeVersion[], k: number): { kept: CodeVersion[]; inForce: CodeVersion | null } {
  const kept = versions.filter((v) => v.iteration <= k);
  return { kept, inForce: kept.at(-1) ?? null };
}

/**
 * Why a run cannot resume with the reward it was trained with, or null when it can: its metric
 * rows before the checkpoint say which version scored them (`reward/version`), and each of those
 * versions must be among `versions` with the same first iteration or earlier. Without this a
 * run whose code was lost would go on scoring 0 with no word.
 */
export function missingVersionProblem(versions: readonly CodeVersion[], rows: readonly Record<string, number>[]): string | null {
  const known = new Map(versions.map((v) => [v.version, v]));
  for (const r of rows) {
    const n = r['reward/version'];
    if (n === undefined || !Number.isFinite(n) || n === 0) continue;
    const v = known.get(n);
    if (!v) {
      return `iteration ${r.iteration} was scored by reward code v${n}, but the run carries no code for v${n} (${versions.length === 0 ? 'it carries none at all' : `it carries ${versions.map((x) => `v${x.version}`).join(', ')}`}); resuming would train without it`;
    }
    if (v.iteration > r.iteration) return `iteration ${r.iteration} was scored by reward code v${n}, but the run says v${n} took effect only at iteration ${v.iteration}`;
  }
  return null;
}

/**
 * A run's versions with those its checkpoint carries (a CLI checkpoint.json lists every version
 * in force up to it): the two must agree where both speak; the longer list wins (the run's can
 * add a version applied at the checkpoint; the checkpoint's fills in a lost versions file).
 * A string says where they disagree.
 */
export function withCheckpointVersions(run: readonly CodeVersion[], checkpoint: readonly CodeVersion[] | undefined): CodeVersion[] | string {
  if (!checkpoint) return [...run];
  for (let i = 0; i < Math.min(run.length, checkpoint.length); i++) {
    const a = run[i];
    const b = checkpoint[i];
    if (a.version !== b.version || a.iteration !== b.iteration || a.code !== b.code) {
      return `the checkpoint's reward-code v${b.version} (from iteration ${b.iteration}) differs from the run's v${a.version} (from iteration ${a.iteration}): the checkpoint belongs to another run, or a file was edited`;
    }
  }
  return [...(run.length >= checkpoint.length ? run : checkpoint)];
}
