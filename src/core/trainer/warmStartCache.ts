/**
 * A shipped warm start: the imitation warm start's result for one exact configuration, saved as
 * a file so a run of that configuration loads it (milliseconds) instead of training it (a minute
 * or more on a laptop core). The warm start is deterministic given what its key holds (the env
 * and its kwargs, the model, the warmStart block, the run's seed, the imitation defaults), so the
 * file is a cache of that computation, not a different starting point: a config that differs in
 * any of them finds no file (its name is the key's hash) or a file whose key differs, and trains
 * its own warm start as before.
 *
 * What the key cannot see: a change to an env's expert or to the imitation code. Such a change
 * bumps WARM_START_CACHE_VERSION, and the files are made again by `npm run warm-start`.
 */
import { stableJson } from '../runs/configs.ts';
import type { RunConfig } from '../presets/schema.ts';
import type { PolicyModel, Weights } from '../models/types.ts';
import { base64ToFloat32, float32ToBase64 } from '../util/base64.ts';
import { DEFAULT_IMITATION } from './imitation.ts';

export const WARM_START_FORMAT = 'agentic-rl-playground/warm-start';

/** Bumped whenever the imitation code or an env's expert changes what a warm start computes. */
export const WARM_START_CACHE_VERSION = 1;

/** The folder (under the app's base URL, and public/ in the repository) the files live in. */
export const WARM_START_DIR = 'warm-start';

/** A shipped warm start as JSON: its key, how the warm start ended, every weight (base64 float32, bit-exact). */
export interface WarmStartFile {
  format: typeof WARM_START_FORMAT;
  version: number;
  /** warmStartKey() of the config it was trained for. */
  key: string;
  /** The warm start's last step: cross-entropy per policy token (nats) and mean p(expert token). */
  ceLoss: number;
  targetProb: number;
  /** Engine that trained it, and its wall time (s): what loading saves. */
  engine: string;
  wallS: number;
  tensors: Record<string, { length: number; base64: string }>;
}

/**
 * Everything the warm start's result depends on, as stable JSON; null for a config without a
 * token warm start (grid MLP warm starts replay in under a second and are not cached).
 */
export function warmStartKey(config: RunConfig): string | null {
  if (!config.warmStart || config.model.kind !== 'transformer') return null;
  return stableJson({
    version: WARM_START_CACHE_VERSION,
    env: { id: config.env.id, kwargs: config.env.kwargs ?? {} },
    model: config.model,
    warmStart: config.warmStart,
    seed: config.seed,
    imitation: { finalLrRatio: DEFAULT_IMITATION.finalLrRatio, maxGradNorm: DEFAULT_IMITATION.maxGradNorm },
  });
}

/** FNV-1a over UTF-16 code units from `seed`: 8 hex digits. */
function fnv1a(text: string, seed: number): string {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** The file name of a key: 16 hex digits of two FNV-1a passes (the file's own key is checked on load). */
export function warmStartFileName(key: string): string {
  return `${fnv1a(key, 0x811c9dc5)}${fnv1a(key, 0x01000193)}.json`;
}

export function warmStartToJson(key: string, weights: Readonly<Weights>, last: { ceLoss: number; targetProb: number; wallS: number }, engine: string): WarmStartFile {
  const tensors: WarmStartFile['tensors'] = {};
  for (const name of Object.keys(weights).sort()) tensors[name] = { length: weights[name].length, base64: float32ToBase64(weights[name]) };
  return { format: WARM_START_FORMAT, version: WARM_START_CACHE_VERSION, key, ceLoss: last.ceLoss, targetProb: last.targetProb, engine, wallS: last.wallS, tensors };
}

export type WarmStartLoad = { ok: true; weights: Weights; file: Omit<WarmStartFile, 'tensors'> } | { ok: false; reason: string };

/**
 * The weights of a shipped warm start when `value` is one for exactly `key` and holds every
 * parameter of `model` at its size; otherwise why not (the caller then trains the warm start).
 */
export function warmStartFromJson(value: unknown, key: string, model: Pick<PolicyModel, 'params'>): WarmStartLoad {
  if (typeof value !== 'object' || value === null) return { ok: false, reason: 'not a JSON object' };
  const f = value as Partial<WarmStartFile>;
  if (f.format !== WARM_START_FORMAT) return { ok: false, reason: `format is ${JSON.stringify(f.format)}, not ${WARM_START_FORMAT}` };
  if (f.version !== WARM_START_CACHE_VERSION) return { ok: false, reason: `version ${String(f.version)}, this playground makes version ${WARM_START_CACHE_VERSION}` };
  if (f.key !== key) return { ok: false, reason: 'trained for another configuration (its key differs)' };
  if (typeof f.tensors !== 'object' || f.tensors === null) return { ok: false, reason: 'no tensors' };
  const weights: Weights = {};
  for (const p of model.params) {
    const t = f.tensors[p.name];
    const size = p.shape.reduce((a, b) => a * b, 1);
    if (!t) return { ok: false, reason: `no tensor ${p.name}` };
    let data: Float32Array;
    try {
      data = base64ToFloat32(t.base64);
    } catch (e) {
      return { ok: false, reason: `tensor ${p.name}: ${(e as Error).message}` };
    }
    if (data.length !== size || t.length !== size) return { ok: false, reason: `tensor ${p.name} has ${data.length} floats, the model's has ${size}` };
    if (!data.every(Number.isFinite)) return { ok: false, reason: `tensor ${p.name} holds a non-finite value` };
    weights[p.name] = data;
  }
  const extra = Object.keys(f.tensors).filter((n) => !(n in weights));
  if (extra.length) return { ok: false, reason: `tensors the model does not have: ${extra.slice(0, 3).join(', ')}` };
  const { tensors: _t, ...meta } = f as WarmStartFile;
  void _t;
  return { ok: true, weights, file: meta };
}
