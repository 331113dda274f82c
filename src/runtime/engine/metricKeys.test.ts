/**
 * Real short runs (ort-web WASM in Node), one per trainer and family: every key a run logs is
 * declared in the metric registry for that run's family and policy, and every key the registry
 * says such a run always logs is there. A grid run logs no tool keys at all. The keys an
 * algorithm descriptor declares as its own (`metrics`) are logged by a run of it and by no run
 * of another algorithm.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../../core/presets/schema.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { appliesTo, metricDecl, type MetricRun } from '../../core/metrics/lookup.ts';
import { METRICS, type MetricDecl } from '../../core/metrics/registry.ts';
import { ALGO_DESCRIPTORS, algoDescriptor } from '../../core/algos/registry/index.ts';
import { loadNodeEngine } from './node.ts';
import { createRewardSandbox } from '../rewardSandbox/quickjs.ts';

const MLP = { kind: 'mlp', hidden: [16], activation: 'tanh' };
const TINY = { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 128 };

/** `logs`: keys the feature under test must have logged (so the run exercised what it names). */
const RUNS: { name: string; run: MetricRun; config: Record<string, unknown>; logs?: string[] }[] = [
  { name: 'grid GRPO (step pool)', run: { family: 'grid', policy: 'step' }, config: { env: { id: 'grid/empty-8x8' }, model: MLP, algo: { algo: 'grpo', groupSize: 4 }, rollout: { groups: 2, learnerBatch: 64 } } },
  { name: 'grid PPO (step pool, value head)', run: { family: 'grid', policy: 'step' }, config: { env: { id: 'grid/empty-8x8' }, model: MLP, algo: { algo: 'ppo' }, rollout: { groups: 2, learnerBatch: 64 } } },
  { name: 'tool GRPO (continuous token loop)', run: { family: 'tool', policy: 'token' }, config: { env: { id: 'tools/calculator' }, model: TINY, algo: { algo: 'grpo', groupSize: 2 }, rollout: { groups: 2, learnerBatch: 4, maxActionTokens: 8 } }, logs: ['async/kv_evictions', 'tools/call_frequency', 'reward/toolCost/mean'] },
  {
    name: 'tool GRPO with an adaptive prompt pool and a warm start',
    run: { family: 'tool', policy: 'token' },
    config: { env: { id: 'tools/calculator' }, model: TINY, warmStart: { steps: 2, batch: 4, lr: 0.003 }, heldOut: { every: 1, questions: 2, k: 2 }, algo: { algo: 'grpo', groupSize: 2, klCoef: 0.001 }, rollout: { groups: 2, learnerBatch: 4, maxActionTokens: 8, budget: { mode: 'adaptive', pool: 8, minPerPrompt: 2, maxPerPrompt: 4, decay: 0.9 } } },
    logs: ['budget/prompts', 'budget/uncertain_share', 'actor/kl_ref', 'eval/pass_at_one', 'eval/pass_at_k', 'perf/eval_s'],
  },
  {
    name: 'grid GRPO with a progressive shaping schedule',
    run: { family: 'grid', policy: 'step' },
    config: { env: { id: 'grid/empty-5x5' }, model: MLP, algo: { algo: 'grpo', groupSize: 4 }, rollout: { groups: 2, learnerBatch: 64 }, schedule: { stages: [{ name: 'early', weights: { progress: 0.5 } }] } },
    logs: ['schedule/stage'],
  },
  { name: 'tool PPO (lockstep token loop)', run: { family: 'tool', policy: 'token' }, config: { env: { id: 'tools/calculator' }, model: TINY, algo: { algo: 'ppo' }, rollout: { groups: 2, learnerBatch: 4, maxActionTokens: 8 } } },
  {
    name: 'grid GRPO with rollout correction (fp8 rollouts, token IS, seq_mean_k3, M2PO)',
    run: { family: 'grid', policy: 'step' },
    config: { env: { id: 'grid/empty-5x5' }, model: MLP, algo: { algo: 'grpo', groupSize: 4, rolloutCorrection: { is: 'token', rs: 'seq_mean_k3', m2po: 0.04, mismatch: 'fp8' } }, rollout: { groups: 2, learnerBatch: 64 } },
    logs: ['correction/is_ess', 'correction/is_ratio_fraction_high', 'correction/rs_masked_fraction', 'correction/second_moment_masked_fraction', 'correction/log_ppl_abs_diff', 'correction/chi_squared_token'],
  },
  { name: 'grid GiGPO', run: { family: 'grid', policy: 'step' }, config: { env: { id: 'grid/empty-5x5' }, model: MLP, algo: { algo: 'gigpo', groupSize: 4 }, rollout: { groups: 2, learnerBatch: 64 } } },
  { name: 'grid ReMax', run: { family: 'grid', policy: 'step' }, config: { env: { id: 'grid/empty-5x5' }, model: MLP, algo: { algo: 'remax', groupSize: 4 }, rollout: { groups: 2, learnerBatch: 64 } } },
  { name: 'two agents (grid/switch-door, shared network)', run: { family: 'grid', policy: 'step' }, config: { env: { id: 'grid/switch-door' }, model: { ...MLP, agents: 'shared' }, algo: { algo: 'ppo' }, rollout: { episodes: 8, learnerBatch: 64 } }, logs: ['agents/a/subgoal_rate', 'agents/b/adv_share', 'critic/value_loss'] },
  {
    name: 'staged: RL, then distill into a smaller MLP',
    run: { family: 'grid', policy: 'step' },
    config: { env: { id: 'grid/empty-5x5' }, model: MLP, algo: { algo: 'grpo', groupSize: 4 }, rollout: { groups: 2, learnerBatch: 64 }, stages: [{ name: 'rl', iterations: 1 }, { name: 'distill', iterations: 1, distill: { student: { kind: 'mlp', hidden: [8] } } }] },
    logs: ['pipeline/stage', 'distill/teacher_prob', 'actor/kl_ref'],
  },
  {
    name: 'staged: tool RL, then distill into a smaller transformer',
    run: { family: 'tool', policy: 'token' },
    config: { env: { id: 'tools/calculator' }, model: TINY, algo: { algo: 'grpo', groupSize: 2 }, rollout: { groups: 2, learnerBatch: 4, maxActionTokens: 8 }, stages: [{ name: 'rl', iterations: 1 }, { name: 'distill', iterations: 1, distill: { student: { ...TINY, dModel: 8, nHeads: 2 } } }] },
    logs: ['pipeline/stage', 'distill/teacher_prob', 'distill/kl', 'actor/kl_ref'],
  },
  { name: 'grid as text, REINFORCE (lockstep token loop)', run: { family: 'grid', policy: 'token' }, config: { env: { id: 'grid/memory', kwargs: { size: 8, viewSize: 3, maxSteps: 6 } }, model: { ...TINY, context: 256 }, algo: { algo: 'reinforce' }, rollout: { groups: 2, learnerBatch: 4, maxActionTokens: 2 } } },
];

/** The keys an algorithm's descriptor declares as its own, and those of every other algorithm. */
function ownKeys(algo: string): { own: readonly string[]; others: string[] } {
  return { own: algoDescriptor(algo).metrics ?? [], others: ALGO_DESCRIPTORS.filter((d) => d.name !== algo).flatMap((d) => d.metrics ?? []) };
}

/** The keys the registry says every iteration of such a run logs. */
function always(run: MetricRun): string[] {
  return (METRICS as readonly MetricDecl[]).filter((d) => !d.when && (d.stream ?? 'iteration') === 'iteration' && !d.key.includes('<') && appliesTo(d, run)).map((d) => d.key);
}

describe('metric keys of real runs', () => {
  for (const { name, run, config, logs = [] } of RUNS) {
    it(`${name}: every key is declared for ${run.family}/${run.policy}, and every always-logged key is there`, { timeout: 60_000 }, async () => {
      const parsed = parseRunConfig({ ...config, iterations: 2, seed: 1 });
      if (!parsed.ok) throw new Error(parsed.messages.join('\n'));
      const engine = await loadNodeEngine('ort-web-wasm');
      const trainer = await createTrainer(parsed.config, engine);
      const keys = new Set<string>();
      for (let i = 0; i < 2; i++) for (const k of Object.keys((await trainer.step()).metrics)) keys.add(k);
      await trainer.release();
      const undeclared = [...keys].filter((k) => metricDecl(k) === undefined);
      expect(undeclared, 'keys missing from src/core/metrics/registry.ts').toEqual([]);
      const misplaced = [...keys].filter((k) => (metricDecl(k)!.stream ?? 'iteration') !== 'iteration' || !appliesTo(metricDecl(k)!, run));
      expect(misplaced, `keys declared for other runs than ${run.family}/${run.policy}`).toEqual([]);
      expect(always(run).filter((k) => !keys.has(k)), 'keys declared as always logged but missing').toEqual([]);
      if (run.family === 'grid') expect([...keys].filter((k) => k.startsWith('tools/') || k === 'reward/toolCost/mean')).toEqual([]);
      expect(logs.filter((k) => !keys.has(k)), 'keys this run exists to exercise').toEqual([]);
      const { own, others } = ownKeys((config.algo as { algo: string }).algo);
      expect(own.filter((k) => !keys.has(k)), "keys the algorithm's descriptor declares as its own").toEqual([]);
      expect(others.filter((k) => keys.has(k)), "keys other algorithms' descriptors declare as theirs").toEqual([]);
    });
  }

  it('every descriptor-declared key is a per-iteration key of the registry, and some run above is of that algorithm', () => {
    const ran = new Set(RUNS.map((r) => (r.config.algo as { algo: string }).algo));
    for (const d of ALGO_DESCRIPTORS) {
      for (const k of d.metrics ?? []) {
        expect(metricDecl(k), `${d.name}: ${k} is not in the metric registry`).toBeDefined();
        expect(metricDecl(k)!.stream ?? 'iteration', `${d.name}: ${k}`).toBe('iteration');
      }
      if (d.metrics?.length) expect(ran.has(d.name), `no run of ${d.name} checks its own keys`).toBe(true);
    }
  });

  it('user reward terms (reward lab): reward/<term>/mean and /std, reward/version, all declared; the std is the sample std of the per-episode term sums', { timeout: 60_000 }, async () => {
    const parsed = parseRunConfig({ ...RUNS[0].config, env: { id: 'grid/empty-5x5' }, iterations: 1, seed: 2 });
    if (!parsed.ok) throw new Error(parsed.messages.join('\n'));
    const engine = await loadNodeEngine('ort-web-wasm');
    const scorer = await createRewardSandbox('export const stepCost = () => -0.01;');
    const trainer = await createTrainer(parsed.config, engine, { rewardLab: { scorer, onNonFinite: 'skip' } });
    const r = await trainer.step();
    await trainer.release();
    scorer.close();
    const keys = Object.keys(r.metrics);
    expect(keys.filter((k) => metricDecl(k) === undefined)).toEqual([]);
    expect(keys).toEqual(expect.arrayContaining(['reward/stepCost/mean', 'reward/stepCost/std', 'reward/version', 'reward/terms_skipped']));
    // Each episode's term sum is −0.01 per step: its spread is 0.01 × the sample std of the episode lengths.
    const steps = r.episodes.map((ep) => ep.actions.length);
    const m = steps.reduce((a, b) => a + b, 0) / steps.length;
    const sampleStd = Math.sqrt(steps.reduce((a, b) => a + (b - m) ** 2, 0) / (steps.length - 1));
    expect(r.metrics['reward/stepCost/std']).toBeCloseTo(0.01 * sampleStd, 12);
    expect(r.metrics['reward/stepCost/mean']).toBeCloseTo(-0.01 * m, 12);
  });
});
