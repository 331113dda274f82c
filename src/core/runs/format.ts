/**
 * A run as data: its resolved config, one metrics row per iteration (the CLI's
 * `metrics.jsonl` shape), sampled trajectories (the CLI's `trajectories.jsonl` shape), and the
 * person's name, tags and note. One run-file format moves between the browser (IndexedDB) and
 * the CLI's output folder; everything here is pure and runs in Node.
 *
 * Exports: metrics as CSV and JSONL, trajectories as JSONL, the config as JSON, the whole run as
 * one JSON file. Imports: a run file, or a CLI output folder's config.json + metrics.jsonl
 * (+ trajectories.jsonl). Every import is validated in full before anything is written, and
 * each message names its field (`metrics[3].iteration: …`, `metrics.jsonl line 4: …`).
 */
import { z } from 'zod';
import { parseRunConfig, type RunConfig } from '../presets/schema.ts';
import { codeVersionsSchema, metricRowSchema, RUN_FILE_FORMAT, RUN_FILE_VERSION, runFileSchema, trajectorySchema, type RunStatus } from './runFileSchema.ts';
import { checkpointFromJson, checkpointToJson, type Checkpoint } from './checkpoint.ts';
import { editsForVersions, rewardVersions, type CodeVersion } from '../reward/versions.ts';
import { rowToOurs } from '../metrics/lookup.ts';

export { RUN_FILE_FORMAT, RUN_FILE_VERSION, RUN_STATUSES, type RunStatus } from './runFileSchema.ts';

/** One iteration's metrics: `iteration` (0-based), `wall_s` (training seconds so far), then the metric registry's keys (src/core/metrics/registry.ts). NaN where undefined. */
export type MetricRow = { iteration: number; wall_s: number } & Record<string, number>;

/** One sampled episode, as the CLI's trajectories.jsonl writes it (grid: actions are ids; tools: text, plus tokens). */
export interface TrajectoryLine {
  iteration: number;
  env: string;
  seed: number;
  group: number;
  reward: number;
  advantage: number;
  env_rewards: number[];
  terminated: boolean;
  truncated: boolean;
  success: boolean;
  actions: (number | string)[];
  logprobs: number[];
  versions: number[];
  tokens?: number[];
  loss_mask?: number[];
  transcript?: string;
  [extra: string]: unknown;
}

/** A hyperparameter changed while the run trained (applied from `iteration` on). */
export interface LiveEdit {
  iteration: number;
  path: string;
  value: unknown;
}

/** What a person and the Runs list know about a run besides its data. */
export interface RunInfo {
  name: string;
  tags: string[];
  note: string;
  /** ms since the epoch. */
  createdAt: number;
  updatedAt: number;
  status: RunStatus;
  /** The error that stopped it (status 'error'). */
  error: string | null;
  /** Live hyperparameter changes after the start (the config is the one the run started with). */
  liveEdits: LiveEdit[];
  /** Where it came from: trained in this browser, or imported from a file / CLI folder. */
  source: 'browser' | 'import';
}

/** A whole run in memory (what a run file holds). */
export interface RunData {
  info: RunInfo;
  config: RunConfig;
  metrics: MetricRow[];
  trajectories: TrajectoryLine[];
  /** The last checkpoint (runs/checkpoint.ts), what Resume continues from; null or absent when none was saved. */
  checkpoint?: Checkpoint | null;
}

// ---------------------------------------------------------------- summaries

/** Best `episode/success_rate` over the rows (NaN rows ignored); 0 for none. */
export function bestSuccess(rows: readonly Record<string, number>[]): number {
  let best = 0;
  for (const r of rows) {
    const v = r['episode/success_rate'];
    if (Number.isFinite(v) && v > best) best = v;
  }
  return best;
}

/** "finished", "interrupted at iteration 12", … (k = iterations saved). */
export function statusText(status: RunStatus, iterations: number): string {
  if (status === 'interrupted') return `interrupted at iteration ${iterations}`;
  if (status === 'stopped') return `stopped at iteration ${iterations}`;
  if (status === 'error') return `error at iteration ${iterations}`;
  return status;
}

// ---------------------------------------------------------------- export

/** Metric keys over all rows, `iteration` and `wall_s` first, the rest sorted. */
export function metricKeys(rows: readonly Record<string, number>[]): string[] {
  const keys = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) keys.add(k);
  keys.delete('iteration');
  keys.delete('wall_s');
  return ['iteration', 'wall_s', ...[...keys].sort()];
}

function csvCell(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** RFC 4180 CSV: a header of metricKeys, one line per row; NaN and missing values are empty cells. */
export function metricsToCsv(rows: readonly Record<string, number>[]): string {
  const keys = metricKeys(rows);
  const lines = [keys.map(csvCell).join(',')];
  for (const r of rows) lines.push(keys.map((k) => (Number.isFinite(r[k]) ? String(r[k]) : '')).join(','));
  return lines.join('\n') + '\n';
}

/** A JSON value with NaN and ±Infinity as null (what JSON.stringify does, made explicit). */
function finiteOrNull(v: number): number | null {
  return Number.isFinite(v) ? v : null;
}

/** A row as JSON: `iteration` and `wall_s` first, NaN as null. */
function rowToJson(r: Readonly<Record<string, number>>): Record<string, number | null> {
  const { iteration, wall_s, ...rest } = r;
  const o: Record<string, number | null> = { iteration, wall_s: finiteOrNull(wall_s) };
  for (const [k, v] of Object.entries(rest)) o[k] = finiteOrNull(v);
  return o;
}

/** One JSON object per line, as the CLI's metrics.jsonl. */
export function metricsToJsonl(rows: readonly Record<string, number>[]): string {
  return rows.map((r) => JSON.stringify(rowToJson(r))).join('\n') + (rows.length ? '\n' : '');
}

/** One JSON object per line, as the CLI's trajectories.jsonl. */
export function trajectoriesToJsonl(lines: readonly TrajectoryLine[]): string {
  return lines.map((l) => JSON.stringify(l)).join('\n') + (lines.length ? '\n' : '');
}

/** The config as the CLI's config.json writes it. */
export function configToJson(config: RunConfig): string {
  return JSON.stringify(config, null, 2) + '\n';
}

/** The run file: everything needed to list, chart and compare the run elsewhere. */
export function runToFile(run: RunData): string {
  const file = {
    format: RUN_FILE_FORMAT,
    version: RUN_FILE_VERSION,
    run: {
      ...run.info,
      createdAt: new Date(run.info.createdAt).toISOString(),
      updatedAt: new Date(run.info.updatedAt).toISOString(),
    },
    config: run.config,
    metrics: run.metrics.map(rowToJson),
    trajectories: run.trajectories,
    checkpoint: run.checkpoint ? checkpointToJson(run.checkpoint) : null,
    // Every reward-code version the run trained with, each with the iteration it took effect:
    // what a reader without the app (the CLI's --resume, a script) needs, in one place.
    rewardCode: runRewardVersions(run),
  };
  return JSON.stringify(file);
}

/** A run's reward-code versions (its starting code, then each applied mid-run), or null when it never had user terms. */
export function runRewardVersions(run: Pick<RunData, 'info' | 'config'>): CodeVersion[] | null {
  const v = rewardVersions(run.config.reward?.code ?? '', run.info.liveEdits);
  return v.length > 0 ? v : null;
}

/** The name of the file beside a CLI run's config.json that lists its reward-code versions (as a run file's `rewardCode`). */
export const REWARD_VERSIONS_FILE = 'reward-versions.json';

/** A file name without characters that file systems refuse. */
export function safeFileName(name: string): string {
  return name.replace(/[^\w.-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 80) || 'run';
}

// ---------------------------------------------------------------- import

/** At most this many problems are listed; the rest are counted. */
const MAX_MESSAGES = 12;

export type ImportResult = { ok: true; run: RunData } | { ok: false; messages: string[] };

/**
 * The live edits a run keeps once its versions list (`rewardCode`, reward-versions.json) is
 * read: the edits it had, plus the versions' edits when it had none for reward.code (a CLI
 * folder), or a message when the two disagree. Nothing is guessed: a list that does not fit the
 * config's starting code is refused.
 */
function withVersionEdits(where: string, config: RunConfig, liveEdits: readonly LiveEdit[], versions: readonly CodeVersion[] | null): { liveEdits: LiveEdit[] } | { error: string } {
  if (versions === null) return { liveEdits: [...liveEdits] };
  const edits = editsForVersions(config.reward.code, versions);
  if (edits === null) return { error: `${where}: does not fit config.reward.code (v1 must be the code the run started with, at iteration 0; versions numbered 1, 2, … in order)` };
  const had = liveEdits.filter((e) => e.path === 'reward.code');
  if (had.length === 0) return { liveEdits: [...liveEdits, ...edits].sort((a, b) => a.iteration - b.iteration) };
  const same = had.length === edits.length && had.every((e, i) => e.iteration === edits[i].iteration && e.value === edits[i].value);
  return same ? { liveEdits: [...liveEdits] } : { error: `${where}: disagrees with run.liveEdits' reward.code edits (which code scored which iteration is ambiguous)` };
}

/** A zod issue path as `a.b[2].c`. */
function fieldPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : s ? `.${String(p)}` : String(p);
  return s;
}

/** Where a row lives: `x.json: metrics[3]` (fields follow with a dot) or `metrics.jsonl line 4` (fields follow a colon). */
type Where = (i: number, field: string) => string;
const inArray = (prefix: string): Where => (i, field) => `${prefix}[${i}]${field ? (field.startsWith('[') ? field : `.${field}`) : ''}`;
const inLines = (file: string, lines: readonly number[]): Where => (i, field) => `${file} line ${lines[i]}${field ? `: ${field}` : ''}`;

function issuePath(prefix: string, path: readonly PropertyKey[]): string {
  return prefix + (fieldPath(path) || '(top level)');
}

function capped(messages: string[]): string[] {
  if (messages.length <= MAX_MESSAGES) return messages;
  return [...messages.slice(0, MAX_MESSAGES), `… and ${messages.length - MAX_MESSAGES} more problems`];
}

const nullToNaN = (v: number | null | undefined): number => (v === null || v === undefined ? NaN : v);

function toMetricRow(r: z.output<typeof metricRowSchema>): MetricRow {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(r)) out[k] = nullToNaN(v as number | null);
  out.iteration = r.iteration;
  out.wall_s = nullToNaN(r.wall_s);
  return out as MetricRow;
}

/** Validates metric rows: every row an object with a whole `iteration` ≥ 0 and numbers (or null), iterations increasing. */
function checkMetrics(rows: readonly unknown[], where: Where): { rows: MetricRow[]; messages: string[] } {
  const out: MetricRow[] = [];
  const messages: string[] = [];
  let last = -1;
  rows.forEach((raw, i) => {
    const r = metricRowSchema.safeParse(raw);
    if (!r.success) {
      for (const issue of r.error.issues) messages.push(`${where(i, fieldPath(issue.path)) || '(top level)'}: ${issue.message}`);
      return;
    }
    if (r.data.iteration <= last) messages.push(`${where(i, 'iteration')}: ${r.data.iteration} does not follow ${last} (iterations must increase)`);
    last = r.data.iteration;
    out.push(toMetricRow(r.data));
  });
  return { rows: out, messages };
}

function checkTrajectories(rows: readonly unknown[], where: Where): { rows: TrajectoryLine[]; messages: string[] } {
  const out: TrajectoryLine[] = [];
  const messages: string[] = [];
  rows.forEach((raw, i) => {
    const r = trajectorySchema.safeParse(raw);
    if (!r.success) for (const issue of r.error.issues) messages.push(`${where(i, fieldPath(issue.path))}: ${issue.message}`);
    else out.push({ ...r.data, reward: nullToNaN(r.data.reward), advantage: nullToNaN(r.data.advantage), env_rewards: r.data.env_rewards.map(nullToNaN), logprobs: r.data.logprobs.map(nullToNaN) });
  });
  return { rows: out, messages };
}

function checkConfig(raw: unknown, prefix: string): { config: RunConfig | null; messages: string[] } {
  const c = parseRunConfig(raw);
  return c.ok ? { config: c.config, messages: [] } : { config: null, messages: c.messages.map((m) => `${prefix}${m}`) };
}

/** JSON.parse with a message that names the file. */
function parseJson(text: string, file: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return { error: `${file}: not valid JSON (${(e as Error).message})` };
  }
}

/** Parses and validates a run file (runToFile's output); nothing is returned unless all of it is valid. */
export function parseRunFile(text: string, file = 'the run file', now = Date.now()): ImportResult {
  const j = parseJson(text, file);
  if ('error' in j) return { ok: false, messages: [j.error] };
  const v = j.value as Record<string, unknown> | null;
  if (v && typeof v === 'object' && typeof v.format === 'string' && v.format === RUN_FILE_FORMAT && typeof v.version === 'number' && v.version > RUN_FILE_VERSION) {
    return { ok: false, messages: [`${file}: version: ${v.version} was written by a newer playground (this one reads version ${RUN_FILE_VERSION})`] };
  }
  const r = runFileSchema.safeParse(j.value);
  if (!r.success) return { ok: false, messages: capped(r.error.issues.map((i) => `${issuePath(`${file}: `, i.path)}: ${i.message}`)) };
  const f = r.data;
  const c = checkConfig(f.config, `${file}: config.`);
  const m = checkMetrics(f.metrics, inArray(`${file}: metrics`));
  const t = checkTrajectories(f.trajectories, inArray(`${file}: trajectories`));
  const cp = f.checkpoint === null ? null : checkpointFromJson(f.checkpoint, `${file}: checkpoint`);
  const messages = [...c.messages, ...m.messages, ...t.messages, ...(cp && !cp.ok ? cp.messages : [])];
  const edits = c.config ? withVersionEdits(`${file}: rewardCode`, c.config, f.run.liveEdits, f.rewardCode) : null;
  if (edits && 'error' in edits) messages.push(edits.error);
  if (messages.length > 0 || !c.config || !edits || 'error' in edits) return { ok: false, messages: capped(messages) };
  const createdAt = Date.parse(f.run.createdAt);
  return {
    ok: true,
    run: {
      info: { ...f.run, liveEdits: edits.liveEdits, createdAt, updatedAt: f.run.updatedAt ? Date.parse(f.run.updatedAt) : now, source: 'import', tags: [...new Set(f.run.tags)] },
      config: c.config,
      metrics: m.rows,
      trajectories: t.rows,
      checkpoint: cp && cp.ok ? cp.checkpoint : null,
    },
  };
}

/** Parses JSON Lines, naming the file and line of a bad one; blank lines are skipped. */
function parseJsonl(text: string, file: string): { values: unknown[]; lines: number[]; messages: string[] } {
  const values: unknown[] = [];
  const lines: number[] = [];
  const messages: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    try {
      values.push(JSON.parse(line));
      lines.push(i + 1);
    } catch (e) {
      messages.push(`${file} line ${i + 1}: not valid JSON (${(e as Error).message})`);
    }
  });
  return { values, lines, messages };
}

/** A file picked for import: its name (the folder part is ignored) and text. */
export interface ImportFile {
  name: string;
  text: string;
}

const baseName = (n: string) => n.split(/[\\/]/).pop() ?? n;

/**
 * A CLI output folder (`npm run train -- --out DIR`): config.json and metrics.jsonl are
 * required, trajectories.jsonl and checkpoint.json are optional; other files (policy.onnx,
 * eval.json) are ignored.
 */
export function parseCliFolder(files: readonly ImportFile[], name: string | null, now = Date.now()): ImportResult {
  const by = new Map(files.map((f) => [baseName(f.name), f.text]));
  const messages: string[] = [];
  const configText = by.get('config.json');
  const metricsText = by.get('metrics.jsonl');
  if (configText === undefined) messages.push('config.json: missing (a CLI output folder holds config.json and metrics.jsonl)');
  if (metricsText === undefined) messages.push('metrics.jsonl: missing (a CLI output folder holds config.json and metrics.jsonl)');
  if (configText === undefined || metricsText === undefined) return { ok: false, messages };
  const cj = parseJson(configText, 'config.json');
  let config: RunConfig | null = null;
  if ('error' in cj) messages.push(cj.error);
  else {
    const c = checkConfig(cj.value, 'config.json: ');
    config = c.config;
    messages.push(...c.messages);
  }
  const mj = parseJsonl(metricsText, 'metrics.jsonl');
  messages.push(...mj.messages);
  const m = checkMetrics(mj.values, inLines('metrics.jsonl', mj.lines));
  messages.push(...m.messages);
  if (mj.values.length === 0 && mj.messages.length === 0) messages.push('metrics.jsonl: holds no iterations');
  let trajectories: TrajectoryLine[] = [];
  const trajText = by.get('trajectories.jsonl');
  if (trajText !== undefined) {
    const tj = parseJsonl(trajText, 'trajectories.jsonl');
    messages.push(...tj.messages);
    const t = checkTrajectories(tj.values, inLines('trajectories.jsonl', tj.lines));
    messages.push(...t.messages);
    trajectories = t.rows;
  }
  let checkpoint: Checkpoint | null = null;
  const cpText = by.get('checkpoint.json');
  if (cpText !== undefined) {
    const cj2 = parseJson(cpText, 'checkpoint.json');
    if ('error' in cj2) messages.push(cj2.error);
    else {
      const cp = checkpointFromJson(cj2.value, 'checkpoint.json:');
      if (cp.ok) checkpoint = cp.checkpoint;
      else messages.push(...cp.messages);
    }
  }
  let liveEdits: LiveEdit[] = [];
  const versionsText = by.get(REWARD_VERSIONS_FILE);
  if (versionsText !== undefined && config) {
    const vj = parseJson(versionsText, REWARD_VERSIONS_FILE);
    const vs = 'error' in vj ? null : codeVersionsSchema.safeParse(vj.value);
    if ('error' in vj) messages.push(vj.error);
    else if (vs && !vs.success) messages.push(...vs.error.issues.map((i) => `${issuePath(`${REWARD_VERSIONS_FILE}: `, i.path)}: ${i.message}`));
    else if (vs) {
      const e = withVersionEdits(REWARD_VERSIONS_FILE, config, [], vs.data);
      if ('error' in e) messages.push(e.error);
      else liveEdits = e.liveEdits;
    }
  }
  if (messages.length > 0 || !config) return { ok: false, messages: capped(messages) };
  const complete = m.rows.length >= config.iterations;
  return {
    ok: true,
    run: {
      info: { name: name ?? `${config.id} · seed ${config.seed} (CLI)`, tags: ['cli'], note: '', createdAt: now, updatedAt: now, status: complete ? 'finished' : 'interrupted', error: null, liveEdits, source: 'import' },
      config,
      // Rows written with --metric-names trl|verl come back in our names (the charts read ours).
      metrics: m.rows.map((r) => rowToOurs(r)),
      trajectories,
      checkpoint,
    },
  };
}

/**
 * Picks the importer for a set of files: one `.json` file that is not config.json is a run file;
 * otherwise the files are a CLI output folder.
 */
export function parseImport(files: readonly ImportFile[], now = Date.now()): ImportResult {
  if (files.length === 0) return { ok: false, messages: ['no file was chosen'] };
  const names = files.map((f) => baseName(f.name));
  if (files.length === 1 && names[0].endsWith('.json') && names[0] !== 'config.json') return parseRunFile(files[0].text, names[0], now);
  const folder = files[0].name.includes('/') ? files[0].name.split('/').slice(-2, -1)[0] : '';
  return parseCliFolder(files, folder || null, now);
}

export { configDiff, flattenConfig, SEED_GROUP_IGNORES, seedGroupKey, stableJson } from './configs.ts';
