/** The contract between `bench/index.ts` and each benchmark suite. */

export interface SuiteOptions {
  /** Fewer rounds: a smoke run that checks everything works (CI), not a measurement. */
  quick: boolean;
  /** Suite-specific flags from the command line (`--name value` or `--name`). */
  flags: Readonly<Record<string, string | true>>;
  /** Human-readable output (tables, notes); goes to stdout above the JSON line. */
  print: (text: string) => void;
  /** Progress chatter; goes to stderr so stdout stays a report. */
  progress: (text: string) => void;
}

/** A suite's machine-readable result: one JSON object, `suite` naming it. */
export interface SuiteResult {
  suite: string;
  [key: string]: unknown;
}

export interface Suite {
  /** One line for `--help` and the unknown-suite message. */
  description: string;
  /** Suite-specific flags it accepts (without `--`), with one-line help each. */
  flags: Readonly<Record<string, string>>;
  run: (opts: SuiteOptions) => Promise<SuiteResult>;
}

/** A bad command line: reported as its message alone (no stack), exit status 1. */
export class UsageError extends Error {
  override name = 'UsageError';
}
