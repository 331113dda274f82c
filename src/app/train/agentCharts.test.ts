/** The "Per-agent credit" section: drawn only for multi-agent envs, one line per agent, keys as algos/agentCredit.ts writes them. */
import { describe, expect, it } from 'vitest';
import '../../core/envs/index.ts';
import { makeEnv } from '../../core/envs/index.ts';
import { loadRunConfig } from '../../cli/presets.ts';
import { dashboardCharts } from './dashboardCharts.ts';

describe('per-agent charts', () => {
  it('appear for grid/switch-door with a line per agent, and not for a one-agent env', () => {
    const coop = loadRunConfig('grid-coop-switch-shared');
    const spec = makeEnv(coop.env.id).spec;
    const charts = dashboardCharts(coop, spec.maxSteps, 7, spec.agents);
    const keys = charts.agents.flatMap((c) => c.lines.map((l) => l.key));
    expect(keys).toEqual([
      'agents/a/subgoal_rate',
      'agents/b/subgoal_rate',
      'episode/success_rate',
      'agents/a/adv_abs_mean',
      'agents/b/adv_abs_mean',
      'agents/a/entropy',
      'agents/b/entropy',
    ]);
    const empty = loadRunConfig('grid-empty-8x8-grpo');
    expect(dashboardCharts(empty, 256, 7, makeEnv('grid/empty-8x8').spec.agents).agents).toEqual([]);
  });
});

describe("an algorithm's own charts", () => {
  it("come from its descriptor: ReMax's baseline, GiGPO's step groups, PPO's critic; none for GRPO or REINFORCE++", () => {
    const base = loadRunConfig('grid-empty-8x8-grpo');
    const signal = (algo: string) => dashboardCharts({ ...base, algo: { ...base.algo, algo } as typeof base.algo }, 256, 7).signal.map((c) => c.id);
    const own = (algo: string) => signal(algo).filter((id) => !signal('grpo').includes(id));
    expect([own('remax'), own('gigpo'), own('reinforcepp')]).toEqual([['remax'], ['step-groups'], []]);
    const remax = dashboardCharts({ ...base, algo: { ...base.algo, algo: 'remax' } }, 256, 7).signal.find((c) => c.id === 'remax')!;
    expect(remax.lines.map((l) => [l.key, l.color])).toEqual([
      ['reward/mean', '#4f46e5'],
      ['remax/greedy_reward_mean', '#c2410c'],
    ]);
    expect(signal('ppo')).toContain('critic');
  });
});
