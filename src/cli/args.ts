/** Command-line parsing shared by the CLI entry points; errors say what was wrong and how to fix it. */
import { parseArgs } from 'node:util';

export class UsageError extends Error {}

/**
 * Runs `main` when `moduleUrl` is the script node was started with (`npm run …`), and exits with
 * its code: 2 for a usage error (its message alone), 1 for any other error (`error: …`).
 */
export function runWhenScript(moduleUrl: string, main: (argv: string[]) => Promise<number>): void {
  if (moduleUrl !== `file://${process.argv[1]}`) return;
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(e instanceof UsageError ? e.message : `error: ${(e as Error).message}`);
      process.exit(e instanceof UsageError ? 2 : 1);
    },
  );
}

export function parseCli<T extends Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean; default?: string | boolean }>>(argv: string[], options: T, usage: string) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n\n${usage}`);
  }
}

export function intArg(value: string | undefined, name: string, min = 0, max = 2 ** 31 - 1): number | undefined {
  if (value === undefined) return undefined;
  // Plain decimal digits only: Number() would also take '', '0x1f' and '1e3'.
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}
