/**
 * npm run warm-start -- --config <preset id | file.json> [--seed N] [--out DIR]
 *
 * Trains a preset's imitation warm start once, on onnxruntime-web's WASM build (the tab's own
 * engine, one thread, so the weights are those the tab would compute), and writes it as a
 * shipped warm start (core/trainer/warmStartCache.ts) to DIR (default public/warm-start/). The
 * app loads it when a run's config matches it exactly, instead of training the warm start.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { initialTokenWeights } from '../core/trainer/createTrainer.ts';
import { WARM_START_DIR, warmStartFileName, warmStartKey, warmStartToJson } from '../core/trainer/warmStartCache.ts';
import { loadNodeEngine } from '../runtime/engine/node.ts';
import { intArg, parseCli, runWhenScript, UsageError } from './args.ts';
import { loadRunConfig } from './presets.ts';

const USAGE = `usage: npm run warm-start -- --config <preset id | file.json> [--seed N] [--out DIR]
  writes DIR/<hash>.json (default DIR public/${WARM_START_DIR}): the config's warm start, loaded by the app instead of training it when a run's env, model, warmStart block and seed all match`;

export async function main(argv: string[]): Promise<number> {
  const { values } = parseCli(argv, { config: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string', default: join('public', WARM_START_DIR) } }, USAGE);
  if (values.config === undefined) throw new UsageError(`--config is required\n\n${USAGE}`);
  const config = loadRunConfig(values.config);
  config.seed = intArg(values.seed, 'seed') ?? config.seed;
  const key = warmStartKey(config);
  if (key === null) throw new UsageError(`${values.config}: no token warm start to ship (warmStart is null, or the model is not a transformer)`);
  const engine = await loadNodeEngine('ort-web-wasm', 1);
  const t0 = performance.now();
  let last = { ceLoss: NaN, targetProb: NaN, wallS: 0 };
  const { weights } = await initialTokenWeights(config, engine, (r, total) => {
    last = r;
    if ((r.step + 1) % 100 === 0 || r.step + 1 === total) console.log(`warm start ${String(r.step + 1).padStart(5)}/${total}  ${r.wallS.toFixed(1)}s  ce ${r.ceLoss.toFixed(3)}  p(expert token) ${r.targetProb.toFixed(3)}`);
  });
  const file = warmStartToJson(key, weights, { ...last, wallS: (performance.now() - t0) / 1000 }, engine.name);
  mkdirSync(values.out, { recursive: true });
  const path = join(values.out, warmStartFileName(key));
  writeFileSync(path, JSON.stringify(file));
  console.log(`wrote ${path} (${config.id}, seed ${config.seed}; ${(JSON.stringify(file).length / 1e6).toFixed(2)} MB)`);
  return 0;
}

runWhenScript(import.meta.url, main);
