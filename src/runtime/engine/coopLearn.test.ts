/**
 * A short real training run on the two-agent grid (grid/switch-door) with one network per agent
 * (presets/grid-coop-switch-separate.json, seed 1, fewer iterations): the team learns the task,
 * both agents' subgoals are reached, and the per-agent credit metrics are there and sane.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import '../../core/envs/index.ts';
import { parseRunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { loadNodeEngine } from './node.ts';

describe('two agents learn to cooperate (grid/switch-door, separate networks)', () => {
  it('reaches 90% team success within 18 PPO iterations (seed 1: 95%), A on the switch first', { timeout: 120_000 }, async () => {
    const r = parseRunConfig(JSON.parse(readFileSync('presets/grid-coop-switch-separate.json', 'utf8')));
    if (!r.ok) throw new Error(r.messages.join('; '));
    expect(r.config.model.kind === 'mlp' && r.config.model.agents).toBe('separate');
    const trainer = await createTrainer({ ...r.config, seed: 1 }, await loadNodeEngine('ort-web-wasm'));
    const history: Record<string, number>[] = [];
    for (let i = 0; i < 18; i++) history.push((await trainer.step()).metrics as Record<string, number>);
    const first = history[0];
    const last = history[history.length - 1];
    // An untrained pair almost never succeeds: A rarely stays on the plate while B is at the door.
    expect(first['episode/success_rate']).toBeLessThan(0.1);
    expect(last['episode/success_rate']).toBeGreaterThanOrEqual(0.9);
    expect(last['agents/a/subgoal_rate']).toBeGreaterThanOrEqual(0.9);
    expect(last['agents/b/subgoal_rate']).toBeGreaterThanOrEqual(0.9);
    // A learns its part (reach the switch) before B can learn its own (pass the open door).
    const reach = (key: string) => history.findIndex((m) => m[key] >= 0.9);
    expect(reach('agents/a/subgoal_rate')).toBeGreaterThanOrEqual(0);
    expect(reach('agents/a/subgoal_rate')).toBeLessThan(reach('agents/b/subgoal_rate'));
    // Turn-taking: A takes the odd steps, B the even ones, so A has the same number or one more.
    const gap = last['agents/a/steps_mean'] - last['agents/b/steps_mean'];
    expect(gap).toBeGreaterThanOrEqual(0);
    expect(gap).toBeLessThanOrEqual(1);
    expect(last['agents/a/adv_share'] + last['agents/b/adv_share']).toBeCloseTo(1, 9);
    await trainer.release();
  });
});
