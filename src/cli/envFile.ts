/**
 * `--env-file FILE` for `npm run train` and `npm run serve`: an env a person made (in the studio
 * or by hand) read from a file, dispatched on what the file is:
 * - a `.json` map (`"kind": "grid-map"`, mapSpec.ts) becomes `grid/custom` with the map as kwargs;
 * - a `.js`/`.mjs` code env (core/envs/code/contract.ts) becomes `code/custom` with its source as
 *   kwargs, loaded into the sandbox and checked (checkCodeEnv) first (codeEnvFile.ts).
 * Either way config.json carries the whole env, and every trainer, worker and server takes it
 * unchanged. Any other kind of file is refused with what is supported.
 */
import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { DEFAULT_MAP_PRESET, mapFromJson, mapToKwargs, type GridMap } from '../core/envs/grid/mapSpec.ts';
import { solveMap } from '../core/envs/grid/mapSolve.ts';
import { envIds, makeEnv, registerEnv, type EnvKwargs } from '../core/envs/index.ts';
import { familyOf } from '../core/envs/families.ts';
import { registerCodeEnv } from '../core/envs/code/index.ts';
import { UsageError } from './args.ts';
import { codeEnvFromFile, DEFAULT_CODE_ENV_PRESET } from './codeEnvFile.ts';
import { vectorBox } from '../core/rollout/stepPool.ts';

/** The preset `npm run train -- --env-file map.json` uses without --config (shared with the Studio's Train on this map). */
export { DEFAULT_MAP_PRESET };

export interface EnvFile {
  /** A map drawn in the studio (.json) or a code env (.js). */
  kind: 'map' | 'code';
  path: string;
  /** The env as a run config names it. */
  env: { id: string; kwargs: EnvKwargs };
  /** The preset that trains it when --config is not given. */
  defaultPreset: string;
  /** One line for the log: what was read and what the checks found. */
  summary: string;
}

/** Reads and checks a map file's text; a UsageError starting with `label` (default `--env-file PATH`) names every problem. */
export function readMap(path: string, text: string, label = `--env-file ${path}`): EnvFile {
  const r = mapFromJson(text);
  if (!r.ok) throw new UsageError(`${label}: not a valid map:\n  - ${r.messages.join('\n  - ')}`);
  const map: GridMap = r.map;
  const verdict = solveMap(map.rows, map.maxSteps);
  if (!verdict.solvable) throw new UsageError(`${label}: this map cannot be solved: ${verdict.reason}`);
  const w = map.rows[0].length;
  return {
    kind: 'map',
    path,
    env: { id: 'grid/custom', kwargs: mapToKwargs(map) },
    defaultPreset: DEFAULT_MAP_PRESET,
    summary: `${path}: map "${map.name}", ${w}x${map.rows.length}, solvable in ${verdict.steps} steps (step limit ${map.maxSteps})`,
  };
}

/** Reads and checks an env file (a code env is loaded into its sandbox first); throws UsageError naming the file and every problem. */
export async function loadEnvFile(path: string): Promise<EnvFile> {
  const ext = extname(path).toLowerCase();
  if (ext === '.js' || ext === '.mjs') {
    const f = await codeEnvFromFile(path);
    return { kind: 'code', path, env: f.env, defaultPreset: DEFAULT_CODE_ENV_PRESET, summary: `${path}: code env "${f.spec.title}", ${vectorBox(f.spec) ? 'vector observations' : `${familyOf(f.spec).label} observations`}, checked` };
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`--env-file ${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (ext === '.json') return readMap(path, text);
  throw new UsageError(`--env-file ${path}: unsupported kind of env file "${ext || '(no extension)'}"; supported: .json (a map drawn in the studio, "kind": "grid-map") and .js (a code env: env, reset(seed), step(action))`);
}

/**
 * Registers the file's env under an id of its own (`file/<name>`), for the server, which serves
 * envs by id and builds each session's env with `makeEnv(id, kwargs)`. A client's reset kwargs
 * are merged over the file's.
 */
export function registerEnvFile(f: EnvFile): string {
  const stem = basename(f.path, extname(f.path)).toLowerCase().replace(/[^a-z0-9-]+/g, '-') || 'env';
  // A code env under code/<name>, a map under file/<name>: the prefix says which kind it is.
  const prefix = f.kind === 'code' ? 'code' : 'file';
  let id = `${prefix}/${stem}`;
  for (let i = 2; envIds().includes(id); i++) id = `${prefix}/${stem}-${i}`;
  if (f.kind === 'code') {
    registerCodeEnv(id, String(f.env.kwargs.code));
    return id;
  }
  const { id: baseId, kwargs } = f.env;
  registerEnv(id, (kw) => makeEnv(baseId, { ...kwargs, ...kw }));
  return id;
}
