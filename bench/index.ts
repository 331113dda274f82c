/**
 * `npm run bench -- [suite] [--json] [--quick] [--<flag> value ...]`
 *
 * Runs one suite, or every suite when none is named. Human-readable tables go to stdout,
 * progress to stderr. With --json the last line of stdout is exactly one JSON object: the
 * suite's result when one suite ran, `{"suites": [...]}` when several did.
 */
import type { Suite, SuiteResult } from './lib/suite.ts';
import { runTrainStep } from './train-step/suite.ts';

export const SUITES: Record<string, Suite> = {
  'train-step': {
    description: 'ms per train step (fwd+PPO loss+bwd+Adam), batch 64: ours (ort-web wasm) vs tfjs, jax-js, ort-node',
    run: runTrainStep,
  },
};

interface Args {
  suites: string[];
  json: boolean;
  quick: boolean;
  help: boolean;
  flags: Record<string, string | true>;
}

export function parseArgs(argv: readonly string[]): Args {
  const args: Args = { suites: [], json: false, quick: false, help: false, flags: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--json') args.json = true;
    else if (a === '--quick') args.quick = true;
    else if (a === '--help' || a === '-h') args.help = true;
    else if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) args.flags[a.slice(2, eq)] = a.slice(eq + 1);
      else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) args.flags[a.slice(2)] = argv[++i];
      else args.flags[a.slice(2)] = true;
    } else args.suites.push(a);
  }
  return args;
}

function suiteList(): string {
  return Object.entries(SUITES)
    .map(([name, s]) => `  ${name.padEnd(12)} ${s.description}`)
    .join('\n');
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    console.log(`usage: npm run bench -- [suite] [--json] [--quick]\n\nsuites:\n${suiteList()}\n\ntrain-step flags: --models a,b  --impls a,b`);
    return 0;
  }
  const unknown = args.suites.filter((s) => !(s in SUITES));
  if (unknown.length > 0) {
    console.error(`bench: unknown suite ${unknown.map((s) => `'${s}'`).join(', ')}. Known suites:\n${suiteList()}`);
    return 1;
  }
  const names = args.suites.length > 0 ? args.suites : Object.keys(SUITES);
  const results: SuiteResult[] = [];
  for (const name of names) {
    console.log(`== ${name}${args.quick ? ' (quick)' : ''}`);
    results.push(
      await SUITES[name].run({
        quick: args.quick,
        flags: args.flags,
        print: (text) => console.log(text),
        progress: (text) => console.error(text),
      }),
    );
  }
  if (args.json) console.log(JSON.stringify(results.length === 1 ? results[0] : { suites: results }));
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(1);
  },
);
