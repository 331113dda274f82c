/** Command-line parsing shared by the CLI entry points; errors say what was wrong and how to fix it. */
import { parseArgs } from 'node:util';

export class UsageError extends Error {}

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
