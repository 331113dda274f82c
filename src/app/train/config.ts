/**
 * Presets, the editable draft config, validation messages per field, the live/restart split,
 * and the URL hash (`#view=train&preset=grid-empty-8x8-grpo&algo.lr=0.002`), so a link
 * reproduces a setup: the preset id plus only the fields that differ from it.
 *
 * Everything here is pure (no store, no DOM) and unit-tested.
 */
import { hashPairs } from '../state/hash.ts';
import { defaultsFor, type Algo } from '../../core/algos/config.ts';
import { parseRunConfig, type RunConfig } from '../../core/presets/schema.ts';
import { kwargDocs } from '../../core/envs/kwargDocs.ts';
import { SHAPING_TERMS, type ShapingTerm } from '../../core/reward/shaping.ts';
import type { LiveHyper } from '../../core/update/hyper.ts';
import { FIELDS, FIELD_BY_PATH, getPath, sameValue, setPath, type DraftConfig } from './fields.ts';
import { overflowMessage, overflowsNumber } from '../../core/util/numberText.ts';

export interface Preset {
  id: string;
  title: string;
  description: string;
  /** The preset resolved through parseRunConfig (every default filled). */
  config: RunConfig;
}

/** The preset a first visit opens with. */
export const STARTER_PRESET = 'grid-empty-8x8-grpo';

/** Resolves raw preset JSON; a broken preset file is reported, not thrown. */
export function loadPresets(raw: readonly unknown[]): { presets: Preset[]; problems: string[] } {
  const presets: Preset[] = [];
  const problems: string[] = [];
  for (const r of raw) {
    const p = parseRunConfig(r);
    if (p.ok) presets.push({ id: p.config.id, title: p.config.title || p.config.id, description: p.config.description, config: p.config });
    else problems.push(`preset ${String((r as { id?: unknown })?.id ?? '?')}: ${p.messages.join('; ')}`);
  }
  // The gentlest first: GRPO on the empty room is the one to try first (the default view), then
  // the other empty-room presets (variations on it), then the rest by id.
  const rank = (id: string) => (id === STARTER_PRESET ? 0 : id.includes('empty') ? 1 : 2);
  presets.sort((a, b) => rank(a.id) - rank(b.id) || a.id.localeCompare(b.id));
  return { presets, problems };
}

export function draftFromPreset(p: Preset, backend: DraftConfig['backend']): DraftConfig {
  return { ...structuredClone(p.config), backend } as DraftConfig;
}

/**
 * Changing the algorithm swaps in that algorithm's defaults (its normalisation, aggregation and
 * epochs differ) but keeps the knobs a person has been turning.
 */
export function withAlgo(d: DraftConfig, algo: Algo): DraftConfig {
  const keep = ['lr', 'entropyCoef', 'clipLow', 'clipHigh', 'klCoef', 'groupSize'] as const;
  const next: Record<string, unknown> = { ...defaultsFor(algo) };
  for (const k of keep) next[k] = d.algo[k];
  return { ...d, algo: next as DraftConfig['algo'] };
}

/**
 * The kwargs another env keeps when the env changes: those it reads (a map's rows mean nothing to
 * the empty room, and would block Start as unknown kwargs). An unknown env keeps them all; its
 * validation names it.
 */
function kwargsFor(envId: string, kwargs: Record<string, unknown>): Record<string, unknown> {
  let known: Set<string>;
  try {
    known = new Set(kwargDocs(envId).map((k) => k.name));
  } catch {
    return kwargs;
  }
  return Object.fromEntries(Object.entries(kwargs).filter(([k]) => known.has(k)));
}

/** Sets one field of the draft (the algorithm switch goes through withAlgo; another env keeps only the kwargs it reads). */
export function setField(d: DraftConfig, path: string, value: unknown): DraftConfig {
  if (path === 'algo.algo') return withAlgo(d, value as Algo);
  if (path === 'env.id' && value !== d.env.id) return { ...d, env: { id: value as string, kwargs: kwargsFor(value as string, d.env.kwargs ?? {}) } };
  const next = setPath(d, path, value);
  // A staged run lasts its stages' sum: keep `iterations` (the run's length everywhere else in
  // the app) in step with an edited stage. A sum that is not a number waits for validation.
  if (/^stages\.\d+\.iterations$/.test(path) && Array.isArray(next.stages)) {
    const sum = next.stages.reduce((n, st) => n + (Number.isInteger(st?.iterations) ? st.iterations : NaN), 0);
    if (Number.isFinite(sum)) return { ...next, iterations: sum };
  }
  return next;
}

export type Validation = { ok: true; config: RunConfig } | { ok: false; byField: Record<string, string[]>; other: string[] };

/** parseRunConfig on the draft, with its messages filed under the form field they name. */
export function validate(d: DraftConfig): Validation {
  const { backend: _backend, ...input } = d;
  const r = parseRunConfig(input);
  if (r.ok) return r;
  const byField: Record<string, string[]> = {};
  const other: string[] = [];
  for (const m of r.messages) {
    const i = m.indexOf(': ');
    const path = i > 0 ? m.slice(0, i) : '';
    // The longest field path that prefixes the message's path (model.hidden.1 → model.hidden).
    const field = FIELDS.map((f) => f.path)
      .filter((p) => path === p || path.startsWith(p + '.'))
      .sort((a, b) => b.length - a.length)[0];
    if (field) (byField[field] ??= []).push(m.slice(i + 2));
    else other.push(m);
  }
  return { ok: false, byField, other };
}

/** Form fields whose value differs between two configs. */
export function changedFields(a: DraftConfig, b: DraftConfig): string[] {
  return FIELDS.filter((f) => !sameValue(getPath(a, f.path), getPath(b, f.path))).map((f) => f.path);
}

/**
 * Whether a change from the running config can be applied live. KL is live only while a
 * reference policy exists (β > 0 before and after) and β is in the loss: turning it on or off
 * builds or drops the reference session, and reward-mode KL is folded into rewards at creation.
 */
export function isLiveChange(running: DraftConfig, next: DraftConfig, path: string): boolean {
  if (!FIELD_BY_PATH.get(path)?.live) return false;
  if (path === 'algo.klCoef') return running.algo.klCoef > 0 && next.algo.klCoef > 0 && running.algo.klMode === 'loss';
  // Φ(s) is recorded by the rollouts only when the run started with the potential term on.
  if (path === 'shaping.potential.weight') return running.shaping.potential.weight > 0 && next.shaping.potential.weight > 0;
  return true;
}

/** What the running trainer's setHyper receives: the optimizer knobs and every shaping weight. */
export function liveHyper(c: DraftConfig): Required<LiveHyper> {
  const a = c.algo;
  const sh = c.shaping;
  return {
    lr: a.lr,
    entropyCoef: a.entropyCoef,
    clipLow: a.clipLow,
    clipHigh: a.clipHigh,
    klCoef: a.klCoef,
    rewardWeights: Object.fromEntries(SHAPING_TERMS.map((t) => [t, sh[t].weight])) as Record<ShapingTerm, number>,
  };
}

// ---------------------------------------------------------------- URL hash

/** True when the hash names the training view. */
export function isTrainHash(hash: string): boolean {
  return /(^#?|&)view=train(&|$)/.test(hash);
}

function encodeValue(v: unknown): string {
  if (Array.isArray(v)) return v.join(',');
  return encodeURIComponent(String(v)).replace(/%2F/gi, '/');
}

/** `#view=train&preset=<id>[&backend=..][&<path>=<value>...]`: only fields that differ from the preset. */
export function formatTrainHash(presetId: string, base: DraftConfig, d: DraftConfig): string {
  const parts = ['view=train', `preset=${encodeURIComponent(presetId)}`];
  if (d.backend !== base.backend) parts.push(`backend=${d.backend}`);
  // algo.algo first: applying it resets the algorithm's other fields to its defaults.
  const changed = changedFields(base, d).filter((p) => p !== 'backend');
  changed.sort((a, b) => Number(b === 'algo.algo') - Number(a === 'algo.algo'));
  for (const p of changed) parts.push(`${p}=${encodeValue(getPath(d, p))}`);
  // Env kwargs that differ from the preset's (`env.kwargs.maxSteps=100`); only for the preset's env.
  const bk = (base.env.kwargs ?? {}) as Record<string, unknown>;
  const dk = (d.env.kwargs ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(dk)) if (!sameValue(bk[k], dk[k]) && isKwargValue(dk[k])) parts.push(`env.kwargs.${encodeURIComponent(k)}=${encodeValue(dk[k])}`);
  return '#' + parts.join('&');
}

const KWARG_KEY = /^env\.kwargs\.[A-Za-z][A-Za-z0-9_]*$/;

function isKwargValue(v: unknown): v is number | boolean | string {
  return typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string';
}

/** A kwarg from a link: true/false and numbers become JSON values, anything else stays text (the env's reader names it). */
function parseKwarg(raw: string): unknown {
  if (raw === 'true' || raw === 'false') return raw === 'true';
  if (raw.trim() !== '' && Number.isFinite(Number(raw))) return Number(raw);
  return raw;
}

function parseValue(path: string, raw: string): { value: unknown } | { error: string } {
  const f = FIELD_BY_PATH.get(path)!;
  const kind = f.input.kind;
  if (kind === 'int' || kind === 'number') {
    const n = Number(raw);
    if (overflowsNumber(raw)) return { error: `${path}=${overflowMessage(raw)}` };
    if (raw.trim() === '' || !Number.isFinite(n)) return { error: `${path}=${raw} is not a number` };
    return { value: n };
  }
  if (kind === 'bool') {
    if (raw !== 'true' && raw !== 'false') return { error: `${path}=${raw} is not true or false` };
    return { value: raw === 'true' };
  }
  if (kind === 'intList') {
    const xs = raw.split(',').map((s) => Number(s.trim()));
    if (xs.some((x) => !Number.isInteger(x))) return { error: `${path}=${raw} is not a comma-separated list of whole numbers` };
    return { value: xs };
  }
  return { value: raw };
}

export interface ParsedTrainHash {
  presetId: string | null;
  backend: DraftConfig['backend'] | null;
  /** Field path → value, in link order. */
  overrides: [string, unknown][];
  problems: string[];
}

export function parseTrainHash(hash: string): ParsedTrainHash {
  const out: ParsedTrainHash = { presetId: null, backend: null, overrides: [], problems: [] };
  const { pairs, problems } = hashPairs(hash);
  out.problems.push(...problems);
  for (const [key, value] of pairs) {
    if (key === 'view') continue;
    if (key === 'preset') out.presetId = value || null;
    else if (key === 'backend') {
      if (value === 'auto' || value === 'webgpu' || value === 'wasm') out.backend = value;
      else out.problems.push(`backend=${value} is not auto, webgpu or wasm`);
    } else if (KWARG_KEY.test(key)) {
      out.overrides.push([key, parseKwarg(value)]);
    } else if (FIELD_BY_PATH.has(key) && key !== 'backend') {
      const v = parseValue(key, value);
      if ('value' in v) out.overrides.push([key, v.value]);
      else out.problems.push(v.error);
    } else out.problems.push(`unknown setting ${JSON.stringify(key)}`);
  }
  return out;
}

/** The draft a link describes: its preset (or the first) with its overrides applied in order. */
export function draftFromHash(
  parsed: ParsedTrainHash,
  presets: readonly Preset[],
  defaultBackend: DraftConfig['backend'],
): { presetId: string; base: DraftConfig; draft: DraftConfig; problems: string[] } {
  const problems = [...parsed.problems];
  let preset = presets.find((p) => p.id === parsed.presetId);
  if (!preset) {
    preset = presets[0];
    if (parsed.presetId) problems.push(`there is no preset "${parsed.presetId}"; using ${preset.id}`);
  }
  const base = draftFromPreset(preset, defaultBackend);
  let draft: DraftConfig = { ...base, backend: parsed.backend ?? defaultBackend };
  for (const [path, value] of parsed.overrides) draft = setField(draft, path, value);
  // A link is held to the form's bounds: a value the form would refuse is named and left out
  // (the preset's stays), rather than filling the form with "/ -5" and a blocked Start.
  const v = validate(draft);
  if (!v.ok) {
    for (const [path, value] of parsed.overrides) {
      const bad = v.byField[path];
      if (!bad) continue;
      draft = setField(draft, path, getPath(base, path));
      problems.push(`${path}=${String(value)}: ${bad.join('; ')}; kept ${String(getPath(base, path))}`);
    }
  }
  return { presetId: preset.id, base, draft, problems };
}

/** The fields that block training, as "Label: message" (empty when the form is valid). */
export function blockingFields(v: Validation, label: (path: string) => string): string[] {
  if (v.ok) return [];
  return [...Object.entries(v.byField).map(([path, ms]) => `${label(path)}: ${ms[0]}`), ...v.other];
}
