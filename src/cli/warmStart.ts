/**
 * npm run warm-start -- --config <preset id | file.json> [--seed N] [--out DIR]
 * npm run warm-start -- --lesson <lesson id> [--out DIR]
 *
 * Trains a preset's imitation warm start once, on onnxruntime-web's WASM build (the tab's own
 * engine, one thread, so the weights are those the tab would compute), and writes it as a
 * shipped warm start (core/trainer/warmStartCache.ts) to DIR (default public/warm-start/). The
 * app loads it when a run's config matches it exactly, instead of training the warm start.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunConfig } from '../core/presets/schema.ts';
import { LESSONS } from '../app/lessons/index.ts';
import { configForSetup } from '../app/lessons/setup.ts';
import { loadPresets } from '../app/train/config.ts';
import { PRESET_DIR } from './presets.ts';
import { initialTokenWeights } from '../core/trainer/createTrainer.ts';
import { WARM_START_DIR, warmStartFileName, warmStartKey, warmStartToJson } from '../core/trainer/warmStartCache.ts';
import { loadNodeEngine } from '../runtime/engine/node.ts';
import { intArg, parseCli, runWhenScript, UsageError } from './args.ts';
import { loadRunConfig } from './presets.ts';

const USAGE = `usage: npm run warm-start -- --config <preset id | file.json> [--seed N] [--out DIR]
       npm run warm-start -- --lesson <lesson id> [--out DIR]   (every step of the lesson whose run has a token warm start, as the tab sets it up)
  writes DIR/<hash>.json (default DIR public/${WARM_START_DIR}): the config's warm start, loaded by the app instead of training it when a run's env, model, warmStart block and seed all match`;

/** The run configs of a lesson's steps that have a token warm start, each once (by key). */
function lessonConfigs(id: string): RunConfig[] {
  const lesson = LESSONS.lessons.find((l) => l.id === id);
  if (!lesson) throw new UsageError(`--lesson ${id}: no such lesson (${LESSONS.lessons.map((l) => l.id).join(', ')})`);
  const presets = loadPresets(readdirSync(PRESET_DIR).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(join(PRESET_DIR, f), 'utf8')) as unknown)).presets;
  const out = new Map<string, RunConfig>();
  lesson.steps.forEach((step, i) => {
    const r = configForSetup(step.setup, presets);
    if (!r.ok) throw new Error(`lesson ${id} step ${i + 1}: ${r.problems.join('; ')}`);
    const key = warmStartKey(r.config);
    if (key !== null && !out.has(key)) out.set(key, r.config);
  });
  return [...out.values()];
}

export async function main(argv: string[]): Promise<number> {
  const { values } = parseCli(argv, { config: { type: 'string' }, lesson: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string', default: join('public', WARM_START_DIR) } }, USAGE);
  if ((values.config === undefined) === (values.lesson === undefined)) throw new UsageError(`one of --config or --lesson is required\n\n${USAGE}`);
  if (values.lesson !== undefined) {
    const configs = lessonConfigs(values.lesson);
    if (configs.length === 0) throw new UsageError(`--lesson ${values.lesson}: no step runs a token warm start`);
    for (const c of configs) await ship(c, values.out);
    return 0;
  }
  const config = loadRunConfig(values.config!);
  config.seed = intArg(values.seed, 'seed') ?? config.seed;
  if (warmStartKey(config) === null) throw new UsageError(`${values.config}: no token warm start to ship (warmStart is null, or the model is not a transformer)`);
  await ship(config, values.out);
  return 0;
}

/** Trains `config`'s warm start and writes it to `dir`. */
async function ship(config: RunConfig, dir: string): Promise<void> {
  const key = warmStartKey(config)!;
  const engine = await loadNodeEngine('ort-web-wasm', 1);
  const t0 = performance.now();
  let last = { ceLoss: NaN, targetProb: NaN, wallS: 0 };
  const { weights } = await initialTokenWeights(config, engine, (r, total) => {
    last = r;
    if ((r.step + 1) % 100 === 0 || r.step + 1 === total) console.log(`warm start ${String(r.step + 1).padStart(5)}/${total}  ${r.wallS.toFixed(1)}s  ce ${r.ceLoss.toFixed(3)}  p(expert token) ${r.targetProb.toFixed(3)}`);
  });
  const file = warmStartToJson(key, weights, { ...last, wallS: (performance.now() - t0) / 1000 }, engine.name);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, warmStartFileName(key));
  writeFileSync(path, JSON.stringify(file));
  console.log(`wrote ${path} (${config.id}, seed ${config.seed}; ${(JSON.stringify(file).length / 1e6).toFixed(2)} MB)`);
}

runWhenScript(import.meta.url, main);
