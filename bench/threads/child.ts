/**
 * One process of the `threads` suite: onnxruntime-web fixes its WASM thread count when it first
 * loads, so each thread count runs in a fresh process. Prints one JSON line: per preset, the warm
 * train-step and rollout-call times of the preset's own model (core/engine/measure.ts).
 *
 *   tsx bench/threads/child.ts <threads> <budget ms> <preset,preset,...>
 */
import '../../src/core/envs/index.ts';
import { measureEngine } from '../../src/core/engine/measure.ts';
import { probeShapeFor } from '../../src/core/engine/shape.ts';
import { loadRunConfig } from '../../src/cli/presets.ts';
import { loadNodeEngine } from '../../src/runtime/engine/node.ts';

const [threads, budget, presets] = process.argv.slice(2);
const engine = await loadNodeEngine('ort-web-wasm', Number(threads));
const out: Record<string, { trainMs: number; rolloutMs: number; samples: number }> = {};
for (const id of presets.split(',')) {
  const t = await measureEngine(engine, probeShapeFor(loadRunConfig(id)), { budgetMs: Number(budget), maxSamples: 40, minSamples: 4 });
  out[id] = { trainMs: t.trainMs, rolloutMs: t.rolloutMs, samples: t.trainSamples };
}
console.log(JSON.stringify(out));
process.exit(0);
