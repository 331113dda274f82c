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

/** Loads a preset id or a JSON file path; throws an Error whose message lists every problem. */
export function loadRunConfig(ref: string): RunConfig {
  const byId = join(PRESET_DIR, `${ref}.json`);
  const path = existsSync(byId) ? byId : existsSync(ref) ? ref : null;
  if (!path) throw new Error(`no preset or file named ${JSON.stringify(ref)}.\nPresets: ${presetIds().join(', ')}`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`${path} is not valid JSON: ${(e as Error).message}`, { cause: e });
  }
  const r = parseRunConfig(json);
  if (!r.ok) throw new Error(`${path} has ${r.messages.length} problem(s):\n  - ${r.messages.join('\n  - ')}`);
  return r.config;
}
