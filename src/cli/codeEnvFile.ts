/**
 * `--env-file FILE.js` for `npm run train` and `npm run serve`: the file is a code env (a
 * JavaScript module, src/core/envs/code/contract.ts). It is loaded into the sandbox and checked
 * (checkCodeEnv) before anything trains or serves it; every problem is reported as FILE:LINE.
 * The env then travels as `{ id: 'code/custom', kwargs: { code } }`, so config.json alone
 * re-creates the run and rollout workers load the same code.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { CODE_ENV_ID, checkCodeEnv, MAX_CODE_CHARS, registerCodeEnv } from '../core/envs/code/index.ts';
import type { EnvSpec } from '../core/envs/types.ts';
import { parseRunConfig, type RunConfig } from '../core/presets/schema.ts';
import { loadCodeEnvs } from '../runtime/codeEnv/index.ts';
import { UsageError } from './args.ts';

/** Preset a code env trains with when no --config is given: grid envs train the MLP with GRPO. */
export const DEFAULT_CODE_ENV_PRESET = 'grid-empty-8x8-grpo';

export interface CodeEnvFile {
  env: { id: string; kwargs: { code: string } };
  spec: EnvSpec;
}

/** Reads, loads and checks the code env in `path`; a UsageError lists every problem as path:line. */
export async function codeEnvFromFile(path: string): Promise<CodeEnvFile> {
  if (!path.endsWith('.js') && !path.endsWith('.mjs')) throw new UsageError(`--env-file ${path}: a code env is a .js module`);
  let code: string;
  try {
    code = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`--env-file ${path}: cannot read it (${(e as Error).message})`);
  }
  if (code.length > MAX_CODE_CHARS) throw new UsageError(`--env-file ${path}: ${code.length} characters, over the ${MAX_CODE_CHARS} limit`);
  await loadCodeEnvs();
  const check = checkCodeEnv(code);
  if (check.problems.length > 0 || check.spec === null) {
    const lines = check.problems.map((p) => `  - ${path}${p.line ? `:${p.line}` : ''}: [${p.rule}] ${p.message.replace(/ \((near )?line \d+\)$/, '')}`);
    throw new UsageError(`--env-file ${path}: the env fails its check (${check.problems.length} problem${check.problems.length === 1 ? '' : 's'}):\n${lines.join('\n')}`);
  }
  return { env: { id: CODE_ENV_ID, kwargs: { code } }, spec: check.spec };
}

/** `config` trained on the file's env (validated like any config: the policy must fit the env's family). */
export function withCodeEnv(config: RunConfig, file: CodeEnvFile, path: string): RunConfig {
  const r = parseRunConfig({ ...config, env: file.env });
  if (!r.ok) throw new UsageError(`--env-file ${path} with config ${config.id}: ${r.messages.join('; ')}`);
  return r.config;
}

/**
 * Reads and checks the file, then registers it as `code/<file name>` (e.g. `code/empty-room`), so
 * the server serves it like a built-in env; returns the id.
 */
export async function registerCodeEnvFile(path: string): Promise<string> {
  const file = await codeEnvFromFile(path);
  const name = basename(path).replace(/\.m?js$/, '').toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[^a-z0-9]+/, '') || 'env';
  const id = `code/${name}`;
  registerCodeEnv(id, file.env.kwargs.code);
  return id;
}
