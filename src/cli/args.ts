/** Command-line parsing shared by the CLI entry points; errors say what was wrong and how to fix it. */
import { parseArgs } from 'node:util';

export class UsageError extends Error {}

export function parseCli<T extends Record<string, { type: 'string' | 'boolean'; short?: string; default?: string | boolean }>>(argv: string[], options: T, usage: string) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n\n${usage}`);
  }
}

export function intArg(value: string | undefined, name: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got ${JSON.stringify(value)}`);
  return n;
}
