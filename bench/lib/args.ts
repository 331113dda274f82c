/** Command-line parsing for `npm run bench`. */

export interface Args {
  suites: string[];
  json: boolean;
  quick: boolean;
  help: boolean;
  flags: Record<string, string | true>;
}

/**
 * `[suite...] [--json] [--quick] [--help] [--name value | --name=value | --name]`: bare words are
 * suite names; a flag takes the next word as its value unless that word is another flag.
 */
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
