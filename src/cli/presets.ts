/** Presets on disk (presets/*.json) for the CLI; the app bundles the same files. */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseRunConfig, type RunConfig } from '../core/presets/schema.ts';

export const PRESET_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../presets');

export function presetIds(): string[] {
  return readdirSync(PRESET_DIR)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -5))
    .sort();
}

/**
 * A preset id's or a JSON file's config as written, before defaults are filled: what a sweep
 * overrides, so a changed field re-derives the defaults that depend on it (varying `algo.algo`
 * gives each algorithm its own defaults, not the base algorithm's). Throws on a missing file or
 * bad JSON; `loadRunConfig` validates.
 */
export function readRunConfigJson(ref: string): { path: string; json: unknown } {
  const byId = join(PRESET_DIR, `${ref}.json`);
  const path = existsSync(byId) ? byId : existsSync(ref) ? ref : null;
  if (!path) throw new Error(`no preset or file named ${JSON.stringify(ref)}.\nPresets: ${presetIds().join(', ')}`);
  try {
    return { path, json: JSON.parse(readFileSync(path, 'utf8')) };
  } catch (e) {
    throw new Error(`${path} is not valid JSON: ${(e as Error).message}`, { cause: e });
  }
}

/** Loads a preset id or a JSON file path; throws an Error whose message lists every problem. */
export function loadRunConfig(ref: string): RunConfig {
  const { path, json } = readRunConfigJson(ref);
  const r = parseRunConfig(json);
  if (!r.ok) throw new Error(`${path} has ${r.messages.length} problem(s):\n  - ${r.messages.join('\n  - ')}`);
  return r.config;
}
