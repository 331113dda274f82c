/**
 * A sweep's grid, shared by `npm run sweep` and the Train view's Sweep: seeds from "1-4", a
 * field's values from "1e-3,3e-3", every combination of up to two fields' values as a validated
 * config, and the runs' names (`lr=0.003 · seed 2`), so the CLI and the tab name the same run
 * the same way. Pure: no files, no workers.
 */
import { parseRunConfig } from '../presets/schema.ts';
import { stableJson } from './configs.ts';
import { overflowMessage, overflowsNumber } from '../util/numberText.ts';

/** A sweep's input is wrong: the message says what and how to fix it. */
export class SweepError extends Error {}

/** Most fields one sweep varies (seeds are the third axis). */
export const MAX_SWEEP_FIELDS = 2;
/** Most seeds one range may hold. */
export const MAX_SEED_RANGE = 1000;

/** Seeds from "1-4", "1,3,7" or "1-3,9": distinct, in the order given. */
export function parseSeeds(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) throw new SweepError(`seeds: ${JSON.stringify(part.trim())} is neither a seed (7) nor a range (1-4)`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo) throw new SweepError(`seeds: the range ${part.trim()} runs backwards`);
    if (hi - lo >= MAX_SEED_RANGE) throw new SweepError(`seeds: ${part.trim()} is more than ${MAX_SEED_RANGE} seeds`);
    if (hi > 2 ** 31 - 1) throw new SweepError(`seeds: ${part.trim()} goes past the largest seed, ${2 ** 31 - 1}`);
    for (let s = lo; s <= hi; s++) if (!out.includes(s)) out.push(s);
  }
  return out;
}

export interface SweepField {
  /** Dotted path in the run config ('algo.lr'). */
  path: string;
  /** The values it takes, in order. */
  values: unknown[];
}

/** Whether `path` can name a config field (and is no prototype key). */
export function isFieldPath(path: string): boolean {
  return /^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$/.test(path) && !path.split('.').some((k) => k === '__proto__' || k === 'constructor' || k === 'prototype');
}

/** "1e-3, 3e-3" → [0.001, 0.003]: JSON where a value parses, else the string as written; a repeat is refused. */
export function parseValues(path: string, text: string): unknown[] {
  const raw = text.split(',').map((v) => v.trim());
  if (raw.some((v) => v === '')) throw new SweepError(`${path}: an empty value (write values separated by commas, e.g. 1e-3, 3e-3)`);
  const huge = raw.find(overflowsNumber);
  if (huge !== undefined) throw new SweepError(`${path}: ${overflowMessage(huge)}`);
  const values = raw.map((v) => {
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v;
    }
  });
  if (new Set(values.map((v) => JSON.stringify(v))).size !== values.length) throw new SweepError(`${path}: a value is listed twice`);
  return values;
}

/** "algo.lr=1e-3,3e-3" → { path: 'algo.lr', values: [0.001, 0.003] } (the CLI's --set). */
export function parseSet(text: string): SweepField {
  const eq = text.indexOf('=');
  if (eq <= 0 || eq === text.length - 1) throw new SweepError(`expected path=v1,v2 (e.g. algo.lr=1e-3,3e-3), got ${JSON.stringify(text)}`);
  const path = text.slice(0, eq).trim();
  if (!isFieldPath(path)) throw new SweepError(`${JSON.stringify(path)} is not a config field path (e.g. algo.lr, rollout.groups)`);
  return { path, values: parseValues(path, text.slice(eq + 1)) };
}

/** A copy of `obj` with `path` set to `value` (objects along the path are created). */
function withPath(obj: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const [head, ...rest] = path.split('.');
  const inner = (obj[head] ?? {}) as Record<string, unknown>;
  return { ...obj, [head]: rest.length === 0 ? value : withPath(typeof inner === 'object' && inner !== null ? inner : {}, rest.join('.'), value) };
}

/** How a value reads in a run's name: numbers as JS writes them (0.003), strings bare. */
const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

export interface SweepConfig {
  /**
   * "lr=0.001 · groupSize=4" (each varied path's last segment = value); the base config's name
   * when nothing varies. Unique in its sweep: two values that read the same (1 and "1") get
   * their key's hash appended.
   */
  name: string;
  /**
   * Its folder-safe key, unique in its sweep: the readable name made filesystem-safe and cut to
   * KEY_NAME_CHARS, then `-` and a hash of its values ("lr=0.001_groupSize=4-1a2b3c4d"), so
   * values the name folds together (`*` and `/` in reward code, `#` and `~` in a map) get
   * folders and config files of their own.
   */
  key: string;
  values: Record<string, unknown>;
  config: Record<string, unknown>;
}

/** How one swept value is applied to a config. */
export type ApplyValue = (config: Record<string, unknown>, path: string, value: unknown) => Record<string, unknown>;

/**
 * Every combination of the fields' values, each a validated config; all problems are reported at
 * once. `apply` sets one value: by default the path alone, which suits a config as written (the
 * CLI: an algorithm swept over a file's `algo` takes its own defaults for what the file leaves
 * out); the tab passes its form's rule, under which a new algorithm brings its defaults and keeps
 * the knobs a person turns (app/train/config.ts `setField`), as switching it in the form does.
 */
export function sweepConfigs(base: Record<string, unknown>, fields: readonly SweepField[], baseName: string, apply: ApplyValue = withPath): SweepConfig[] {
  if (fields.length > MAX_SWEEP_FIELDS) throw new SweepError(`at most ${MAX_SWEEP_FIELDS} fields per sweep (seeds are the third axis)`);
  if (new Set(fields.map((f) => f.path)).size !== fields.length) throw new SweepError('the same field is swept twice');
  let combos: Record<string, unknown>[] = [{}];
  for (const f of fields) combos = combos.flatMap((c) => f.values.map((v) => ({ ...c, [f.path]: v })));
  const problems: string[] = [];
  const out = combos.map((values) => {
    let config = base;
    // The algorithm first: another swept algo field lands on the new algorithm's config.
    for (const [p, v] of Object.entries(values).sort(([a], [b]) => Number(b === 'algo.algo') - Number(a === 'algo.algo'))) config = apply(config, p, v);
    const name = fields.length === 0 ? baseName : Object.entries(values).map(([p, v]) => `${p.split('.').pop()}=${show(v)}`).join(' · ');
    const r = parseRunConfig(config);
    if (!r.ok) problems.push(...r.messages.map((m) => `${name}: ${m}`));
    return { name, values, config: r.ok ? (r.config as unknown as Record<string, unknown>) : config };
  });
  if (problems.length) throw new SweepError(`the sweep's configs have ${problems.length} problem(s):\n  - ${problems.join('\n  - ')}`);
  const keys = configKeys(out.map((c) => ({ name: c.name, values: fields.length === 0 ? null : c.values })));
  // Names that read the same (1 and "1") tell themselves apart by their key's hash.
  return out.map((c, i) => ({ ...c, key: keys[i], name: out.filter((o) => o.name === c.name).length > 1 ? `${c.name} [${keys[i].slice(keys[i].lastIndexOf('-') + 1)}]` : c.name }));
}

/** Most characters of the readable part of a key (a map or a reward code as a value would pass a file name's 255 bytes). */
export const KEY_NAME_CHARS = 60;

/** FNV-1a over the UTF-16 code units of `text`, from `seed`: 8 hex digits. */
function fnv1a(text: string, seed = 0x811c9dc5): string {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** A name as a folder name: ` · ` as `_`, anything outside [\w.=+-] as `-`, at most KEY_NAME_CHARS. */
const folderSafe = (name: string) => name.replace(/ · /g, '_').replace(/[^\w.=+-]/g, '-').slice(0, KEY_NAME_CHARS);

/**
 * Keys for a sweep's configs (see SweepConfig.key), distinct by construction: the hash of each
 * config's values (stable JSON, so 1 and "1" differ) beside its readable name; `values` null
 * (a sweep of no field, one config) gives the bare name. Two hashes that meet (1 in ~4·10⁹ per
 * pair) take a second hash, and then their place in the list, so keys never collide.
 */
export function configKeys(configs: readonly { name: string; values: Record<string, unknown> | null }[]): string[] {
  const keys = configs.map((c) => (c.values === null ? folderSafe(c.name) : `${folderSafe(c.name)}-${fnv1a(stableJson(c.values))}`));
  const clash = (i: number) => keys.indexOf(keys[i]) !== i || keys.lastIndexOf(keys[i]) !== i;
  const twice = keys.map((_, i) => clash(i));
  twice.forEach((t, i) => t && (keys[i] = `${keys[i]}${fnv1a(stableJson(configs[i].values), 0x01000193)}`));
  return keys.map((k, i) => (clash(i) ? `${k}-${i + 1}` : k));
}

/** A run's name in a sweep: its config's name and its seed ("lr=0.003 · seed 2"). */
export const sweepRunName = (config: string, seed: number) => `${config} · seed ${seed}`;

/** A folder name for a run (the CLI's): its config's key (SweepConfig.key, already filesystem-safe) and seed. */
export const runFolder = (key: string, seed: number) => `${key}_seed${seed}`;

/** One run of a sweep: config × seed, in the order they start (configs outer, seeds inner). */
export interface SweepJob {
  name: string;
  configName: string;
  /** Its config's key (SweepConfig.key): unique in the sweep, where a name may only read alike. */
  configKey: string;
  seed: number;
  config: Record<string, unknown>;
}

/** The runs of a sweep, each config on every seed, its `seed` field set. */
export function sweepJobs(configs: readonly SweepConfig[], seeds: readonly number[]): SweepJob[] {
  return configs.flatMap((c) => seeds.map((seed) => ({ name: sweepRunName(c.name, seed), configName: c.name, configKey: c.key, seed, config: { ...c.config, seed } })));
}
