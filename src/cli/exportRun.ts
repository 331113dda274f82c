/**
 * npm run export -- --run <CLI output folder | run file.json> --to trl|verl [--out DIR] [--force]
 *
 * Writes a run as a TRL or veRL experiment (src/core/export/bundle.ts): the config under the
 * framework's names, a launch script, the reward terms as Python, and a README.txt that says
 * what did not translate. The env stays the playground's own, served by `npm run serve`.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCliFolder, parseRunFile, REWARD_VERSIONS_FILE, safeFileName } from '../core/runs/format.ts';
import { buildExport, EXPORT_TARGETS, exportInputs, type ExportTarget } from '../core/export/bundle.ts';
import { parseCli, runWhenScript, UsageError } from './args.ts';

const USAGE = `usage: npm run export -- --run <DIR | run.json> --to trl|verl [--out DIR] [--force]
  --run    a CLI output folder (npm run train -- --out DIR) or a run file exported from the Runs view
  --to     trl: GRPOConfig + a GRPOTrainer script; verl: hydra overrides + a verl-tool launch script
  --out    folder to write (default: <run>-<to> beside the run); must be empty or new unless --force
  --force  write into a folder that already holds files (files of the same name are replaced)`;

/** The veRL recipe shipped with the project (copied into veRL exports). */
export const VERL_RECIPE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../examples/verl');
const VERL_RECIPE_FILES = ['prepare_data.py', 'playground_reward.py', 'stop_tokens.txt'];

export function readVerlRecipe(dir = VERL_RECIPE_DIR): Record<string, string> {
  return Object.fromEntries(VERL_RECIPE_FILES.map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

/** The run at `path` (a CLI folder or a run file), or a UsageError naming what is wrong. */
function readRun(path: string) {
  if (!existsSync(path)) throw new UsageError(`--run ${path}: no such file or folder`);
  if (statSync(path).isDirectory()) {
    const names = ['config.json', 'metrics.jsonl', REWARD_VERSIONS_FILE].filter((f) => existsSync(join(path, f)));
    const r = parseCliFolder(names.map((name) => ({ name, text: readFileSync(join(path, name), 'utf8') })), basename(resolve(path)));
    if (!r.ok) throw new UsageError(`--run ${path}: not a run folder:\n  ${r.messages.join('\n  ')}`);
    return r.run;
  }
  const r = parseRunFile(readFileSync(path, 'utf8'), basename(path));
  if (!r.ok) throw new UsageError(`--run ${path}: not a run file:\n  ${r.messages.join('\n  ')}`);
  return r.run;
}

export async function main(argv: string[]): Promise<number> {
  const { values } = parseCli(argv, { run: { type: 'string' }, to: { type: 'string' }, out: { type: 'string' }, force: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } }, USAGE);
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.run) throw new UsageError(`--run is required\n\n${USAGE}`);
  if (!EXPORT_TARGETS.includes(values.to as ExportTarget)) throw new UsageError(`--to must be ${EXPORT_TARGETS.join(' or ')}, got ${values.to ?? 'nothing'}\n\n${USAGE}`);
  const to = values.to as ExportTarget;
  const run = readRun(values.run);
  const result = buildExport(exportInputs(run, to === 'verl' ? readVerlRecipe() : {}), to);
  if (!result.ok) throw new UsageError(`--run ${values.run}: ${result.message}`);
  const out = values.out ?? join(dirname(resolve(values.run)), `${safeFileName(basename(resolve(values.run)).replace(/\.json$/, ''))}-${to}`);
  if (existsSync(out) && readdirSync(out).length > 0 && !values.force) throw new UsageError(`--out ${out} already holds files: choose another folder or pass --force`);
  mkdirSync(out, { recursive: true });
  for (const [name, text] of Object.entries(result.files)) writeFileSync(join(out, name), text, name.endsWith('.sh') ? { mode: 0o755 } : {});
  console.log(`wrote ${Object.keys(result.files).length} files to ${out}`);
  for (const n of result.notes) console.log(`  did not translate: ${n}`);
  return 0;
}

runWhenScript(import.meta.url, main);
