/**
 * `npm run check-env -- FILE…`: the env check alone, as Gymnasium's `check_env`, on a code env
 * (`.js`/`.mjs`, checkCodeEnv: the contract, determinism, the module's expert() played to the
 * end, non-finite rewards, memory that grows across resets, a step too slow to train; each
 * problem at its line) or a map (`.json`: valid, and solvable within its step limit). Nothing
 * trains. Prints each problem as FILE:LINE: [rule] message; exits 0 when every file passes,
 * 1 when one fails its check, 2 on a usage error (no file, unreadable, an unsupported kind).
 * In Node, code envs are timed in the V8 sandbox headless training uses (./node.ts), under
 * CODE_ENV_CALL_TIMEOUT_MS when it is set.
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { checkCodeEnv, MAX_CODE_CHARS } from '../core/envs/code/index.ts';
import { familyOf } from '../core/envs/families.ts';
import { loadCodeEnvs } from '../runtime/codeEnv/index.ts';
import '../runtime/codeEnv/node.ts';
import { parseCli, runWhenScript, UsageError } from './args.ts';
import { problemLines } from './codeEnvFile.ts';
import { readMap } from './envFile.ts';

const USAGE = `usage: npm run check-env -- FILE [FILE…]
  FILE  a code env module (.js, .mjs) or a map drawn in the studio (.json)
Checks each file as training would before it starts, and trains nothing. Exit status: 0 all pass, 1 a check failed, 2 a usage error.`;

/** One file's verdict: the lines to print and whether it passed. */
export interface FileVerdict {
  ok: boolean;
  lines: string[];
}

/** Checks the env in `path`; throws UsageError when it cannot be read or is not an env file. */
export async function checkEnvFile(path: string): Promise<FileVerdict> {
  const ext = extname(path).toLowerCase();
  if (ext !== '.js' && ext !== '.mjs' && ext !== '.json') throw new UsageError(`${path}: unsupported kind of env file "${ext || '(no extension)'}"; supported: .js / .mjs (a code env: env, reset(seed), step(action)) and .json (a map drawn in the studio, "kind": "grid-map")`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (ext === '.json') {
    try {
      return { ok: true, lines: [`${readMap(path, text, path).summary}: passes`] };
    } catch (e) {
      if (e instanceof UsageError) return { ok: false, lines: [e.message] };
      throw e;
    }
  }
  if (text.length > MAX_CODE_CHARS) return { ok: false, lines: [`${path}: ${text.length.toLocaleString('en-US')} characters, over the ${MAX_CODE_CHARS.toLocaleString('en-US')} a code env may have`] };
  await loadCodeEnvs();
  const check = checkCodeEnv(text);
  if (check.problems.length === 0 && check.spec !== null) {
    const s = check.spec;
    return { ok: true, lines: [`${path}: code env "${s.title}" passes its check (${familyOf(s).label} observations, ${s.maxSteps} steps at most)`] };
  }
  const n = check.problems.length;
  return { ok: false, lines: [`${path}: the code env fails its check (${n} problem${n === 1 ? '' : 's'}):`, ...problemLines(path, check.problems)] };
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCli(argv, { help: { type: 'boolean', short: 'h', default: false } }, USAGE);
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError(`name an env file to check\n\n${USAGE}`);
  let ok = true;
  for (const path of positionals) {
    const v = await checkEnvFile(path);
    (v.ok ? console.log : console.error)(v.lines.join('\n'));
    ok &&= v.ok;
  }
  return ok ? 0 : 1;
}

runWhenScript(import.meta.url, main);
