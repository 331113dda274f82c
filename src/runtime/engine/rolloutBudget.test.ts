/**
 * The adaptive rollout budget (algos/budget.ts) in the continuous token trainer: every iteration
 * spends exactly groups × groupSize episodes, split into groups of unequal size over a prompt
 * pool; the budget/* metrics are reported; and a sync run resumed from a checkpoint (the prompts'
 * estimates included) continues bit for bit. A tiny transformer on the calculator keeps it fast.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig, type RunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { checkpointFromJson, checkpointToJson, type Checkpoint } from '../../core/runs/checkpoint.ts';
import type { RunTrainer } from '../../core/trainer/api.ts';
import type { Engine } from '../../core/engine/types.ts';
import { VirtualClock } from '../../core/envs/clock.ts';
import { loadNodeEngine } from './node.ts';

const TINY = { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 128 };

function config(mode: 'uniform' | 'adaptive'): RunConfig {
  const r = parseRunConfig({
    env: { id: 'tools/calculator', kwargs: { minDigits: 1, maxDigits: 2, mixedDigits: true } },
    model: TINY,
    algo: { algo: 'grpo', groupSize: 4, lr: 0.003 },
    rollout: { groups: 4, learnerBatch: 8, maxActionTokens: 12, budget: { mode, pool: 6, minPerPrompt: 2, maxPerPrompt: 8, decay: 0.9 } },
    iterations: 4,
    seed: 7,
  });
  if (!r.ok) throw new Error(r.messages.join('\n'));
  return r.config;
}

const timeless = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/')));
const make = (cfg: RunConfig, engine: Engine, resume?: Checkpoint): Promise<RunTrainer> => createTrainer(cfg, engine, { clock: new VirtualClock(), resume });

describe('rollout budget', () => {
  it('the config refuses a pool with dynamic sampling, async scheduling, or adaptive without a pool', () => {
    const base = { env: { id: 'tools/calculator' }, model: TINY, algo: { algo: 'grpo', groupSize: 4 }, iterations: 1 };
    const bad = parseRunConfig({ ...base, algo: { algo: 'grpo', groupSize: 4, dynamicSampling: { enabled: true } }, rollout: { mode: 'async', budget: { mode: 'adaptive', pool: 0 } } });
    expect(bad.ok).toBe(false);
    const msgs = bad.ok ? '' : bad.messages.join('\n');
    expect(msgs).toMatch(/rollout\.budget\.pool: adaptive allocation .* needs a finite pool/);
    const bad2 = parseRunConfig({ ...base, algo: { algo: 'grpo', groupSize: 4, dynamicSampling: { enabled: true } }, rollout: { mode: 'async', budget: { mode: 'adaptive', pool: 4 } } });
    const msgs2 = bad2.ok ? '' : bad2.messages.join('\n');
    expect(msgs2).toMatch(/use rollout\.mode 'sync'/);
    expect(msgs2).toMatch(/algo\.dynamicSampling\.enabled: a prompt pool fixes/);
    expect(parseRunConfig({ ...base, rollout: { budget: { mode: 'adaptive', pool: 4 } } }).ok).toBe(true);
  });

  it('adaptive: the same episodes per iteration as uniform, in groups of unequal size; resumes bit for bit', { timeout: 120_000 }, async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const cfg = config('adaptive');
    const straight = await make(cfg, engine);
    const ref: Record<string, number>[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await straight.step();
      expect(r.episodes.length).toBe(16); // groups × groupSize, whatever the split
      expect(r.metrics['train/batch_episodes'] ?? 16).toBe(16);
      const m = r.metrics as Record<string, number>;
      expect(m['budget/episodes_per_group_min']).toBeGreaterThanOrEqual(2);
      expect(m['budget/episodes_per_group_max']).toBeLessThanOrEqual(8);
      expect(m['budget/prompts'] * m['budget/episodes_per_group_min']).toBeLessThanOrEqual(16);
      expect(Number.isFinite(m['groups/frac_zero_std'])).toBe(true);
      ref.push(timeless(m));
    }
    // Iteration 0: every prompt unseen (estimate 0.5): the first 4 prompts, 4 episodes each (equal estimates, equal shares).
    expect(ref[0]['budget/prompts']).toBe(4);
    expect(ref[0]['budget/episodes_per_group_max']).toBe(4);
    expect(ref[0]['budget/uncertain_share']).toBe(1);
    await straight.release();

    const first = await make(cfg, engine);
    for (let i = 0; i < 2; i++) await first.step();
    const parsed = checkpointFromJson(JSON.parse(JSON.stringify(checkpointToJson(await first.checkpoint()))));
    if (!parsed.ok) throw new Error(parsed.messages.join('\n'));
    expect(parsed.checkpoint.prompts?.successes.length).toBe(6);
    await first.release();
    const resumed = await make(cfg, engine, parsed.checkpoint);
    await resumed.restore(parsed.checkpoint);
    for (let i = 2; i < 4; i++) expect(timeless((await resumed.step()).metrics as Record<string, number>)).toEqual(ref[i]);
    await resumed.release();
  });

  it('uniform with a pool: groupSize episodes per prompt, cycling through the pool', { timeout: 60_000 }, async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const t = await make(config('uniform'), engine);
    for (let i = 0; i < 2; i++) {
      const m = (await t.step()).metrics as Record<string, number>;
      expect(m['budget/prompts']).toBe(4);
      expect(m['budget/episodes_per_group_max']).toBe(4);
      expect(m['budget/episodes_per_group_min']).toBe(4);
    }
    await t.release();
  });
});
