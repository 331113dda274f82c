/**
 * One setup of the `soak` suite, in a process of its own (run with --expose-gc): trains a config
 * for N iterations and prints one JSON line with memory samples after a full GC at each
 * iteration, or every `every`-th (heap used, external + array buffers, RSS; bytes).
 *
 *   node --expose-gc --import tsx bench/soak/child.ts <config.json> <iterations> [every]
 */
import { readFileSync } from 'node:fs';
import '../../src/core/envs/index.ts';
import { parseRunConfig } from '../../src/core/presets/schema.ts';
import { createTrainer } from '../../src/core/trainer/createTrainer.ts';
import { loadNodeEngine } from '../../src/runtime/engine/node.ts';
import { createNodeWorkerPool } from '../../src/runtime/pool/node.ts';
import { nodeTokenWorker } from '../../src/runtime/tokenWorker/node.ts';

const [file, its, everyArg] = process.argv.slice(2);
const every = Math.max(1, Number(everyArg ?? 1));
const parsed = parseRunConfig(JSON.parse(readFileSync(file, 'utf8')));
if (!parsed.ok) throw new Error(parsed.messages.join('; '));
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const trainer = await createTrainer(parsed.config, await loadNodeEngine('ort-web-wasm'), {
  workerPool: (size) => (model, weights) => createNodeWorkerPool({ size, model, weights }),
  tokenWorker: nodeTokenWorker,
});
const samples: { heap: number; external: number; rss: number }[] = [];
const t0 = performance.now();
for (let i = 0; i < Number(its); i++) {
  await trainer.step();
  if ((i + 1) % every !== 0) continue;
  gc();
  const m = process.memoryUsage();
  samples.push({ heap: m.heapUsed, external: m.external + m.arrayBuffers, rss: m.rss });
}
await trainer.release();
console.log(JSON.stringify({ samples, wallS: (performance.now() - t0) / 1000 }));
process.exit(0);
