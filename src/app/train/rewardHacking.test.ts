/**
 * The hackable presets, trained for real (Node, WASM, seed 1): under the farmed 'closer' term the
 * Reward badge turns to a warning within the preset's iterations, and under the same term written
 * potential-based it never does. The badge reads the same metrics the dashboard shows.
 */
import { describe, expect, it } from 'vitest';
import '../../core/envs/index.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { loadNodeEngine } from '../../runtime/engine/node.ts';
import { rewardLabFor } from '../../runtime/rewardSandbox/index.ts';
import { readFileSync } from 'node:fs';
import { parseRunConfig, type RunConfig } from '../../core/presets/schema.ts';
import { rewardHealth, type Level } from './health.ts';

function loadRunConfig(id: string): RunConfig {
  const r = parseRunConfig(JSON.parse(readFileSync(`presets/${id}.json`, 'utf8')));
  if (!r.ok) throw new Error(r.messages.join('\n'));
  return r.config;
}

/** The badge's level after each iteration of `preset` (stops early once `until` says so). */
async function levels(preset: string, until: (l: Level) => boolean): Promise<{ levels: Level[]; success: number[] }> {
  const config = loadRunConfig(preset);
  const lab = await rewardLabFor(config);
  const trainer = await createTrainer(config, await loadNodeEngine('ort-web-wasm'), { rewardLab: lab });
  const history: Record<string, number>[] = [];
  const out: Level[] = [];
  try {
    for (let i = 0; i < config.iterations; i++) {
      history.push({ ...(await trainer.step()).metrics });
      out.push(rewardHealth(history).level);
      if (until(out[out.length - 1])) break;
    }
  } finally {
    await trainer.release();
    lab?.scorer.close();
  }
  return { levels: out, success: history.map((m) => m['episode/success_rate']) };
}

describe('reward hacking, caught by the Reward badge', () => {
  it('grid-empty-8x8-hackable: the farmed term turns the badge to a warning', { timeout: 240_000 }, async () => {
    const r = await levels('grid-empty-8x8-hackable', (l) => l === 'warn' || l === 'bad');
    const at = r.levels.findIndex((l) => l === 'warn' || l === 'bad');
    console.log(`hackable: badge ${r.levels.join(' ')}; warned at iteration ${at + 1}; success ${r.success.map((s) => s.toFixed(2)).join(' ')}`);
    expect(at).toBeGreaterThanOrEqual(0);
  });

  it('grid-empty-8x8-potential: the potential-based term keeps it aligned and the task is learnt', { timeout: 240_000 }, async () => {
    const r = await levels('grid-empty-8x8-potential', () => false);
    console.log(`potential: badge ${r.levels.join(' ')}; success ${r.success.map((s) => s.toFixed(2)).join(' ')}`);
    expect(r.levels.filter((l) => l === 'warn' || l === 'bad')).toEqual([]);
    expect(Math.max(...r.success.slice(-3))).toBeGreaterThanOrEqual(0.9);
  });
});
