/**
 * `--env-file FILE.js` for `npm run train` and `npm run serve` (dispatched by envFile.ts): the
 * file is a code env (a JavaScript module, src/core/envs/code/contract.ts). It is loaded into the sandbox and checked
 * (checkCodeEnv) before anything trains or serves it; every problem is reported as FILE:LINE.
 * The env then travels as `{ id: 'code/custom', kwargs: { code } }`, so config.json alone
 * re-creates the run and rollout workers load the same code.
 */
import { readFileSync } from 'node:fs';
import { CODE_ENV_ID, checkCodeEnv, MAX_CODE_CHARS, type CodeEnvProblem } from '../core/envs/code/index.ts';
import type { EnvSpec } from '../core/envs/types.ts';
import { loadCodeEnvs } from '../runtime/codeEnv/index.ts';
import '../runtime/codeEnv/node.ts';
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
    throw new UsageError(`--env-file ${path}: the env fails its check (${check.problems.length} problem${check.problems.length === 1 ? '' : 's'}):\n${problemLines(path, check.problems).join('\n')}`);
  }
  return { env: { id: CODE_ENV_ID, kwargs: { code } }, spec: check.spec };
}

/** Each problem as `  - PATH:LINE: [rule] message` (`near line` where the line is only near). */
export function problemLines(path: string, problems: readonly CodeEnvProblem[]): string[] {
  // The check's messages say `--env-file FILE` where a command needs the file: this one.
  return problems.map((p) => `  - ${path}${p.line ? `:${p.line}` : ''}: [${p.rule}] ${p.near ? `(near this line) ` : ''}${p.message.replace(/ \((near )?line \d+\)$/, '').replaceAll('--env-file FILE', `--env-file ${path}`)}`);
}
