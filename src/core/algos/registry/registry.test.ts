import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../../presets/schema.ts';
import { trainStepOptions } from '../../update/hyper.ts';
import { parseAlgoConfig } from '../config.ts';
import { ALGO_DESCRIPTORS, ALGOS, GROUP_ALGOS, algoDescriptor, algoTarget } from './index.ts';

/**
 * What each algorithm meant before the registry, written out by hand (from the lists and name
 * compares it replaced, and the papers): groups, std division, default aggregation, epochs,
 * the loss objective, a critic.
 */
const EXPECTED: Record<string, [group: boolean, std: boolean, aggregation: string, epochs: number, objective: string, critic: boolean]> = {
  reinforce: [false, false, 'token', 1, 'clip', false],
  grpo: [true, true, 'token', 1, 'clip', false],
  drgrpo: [true, false, 'constant', 1, 'clip', false],
  rloo: [true, false, 'token', 1, 'clip', false],
  ppo: [false, false, 'token', 4, 'clip', true],
  cispo: [true, true, 'token', 1, 'cispo', false],
  gspo: [true, true, 'sequence', 1, 'gspo', false],
  gigpo: [true, true, 'token', 1, 'clip', false],
  remax: [true, false, 'token', 1, 'clip', false],
  reinforcepp: [true, false, 'token', 1, 'clip', false],
  'mt-grpo': [true, true, 'token', 1, 'clip', false],
  sapo: [true, true, 'sequence', 1, 'sapo', false],
  gmpo: [true, true, 'sequence', 1, 'gmpo', false],
  dapo: [true, true, 'token', 1, 'clip', false],
};

/** Where an algorithm itself refuses to run (absent: grid MLP, grid as text and tool envs, sync and async). */
const REFUSED: Record<string, string[]> = { remax: ['async'] };

const RUNS = {
  'grid-mlp': { env: { id: 'grid/empty-5x5' }, model: { kind: 'mlp' } },
  'grid-text': { env: { id: 'grid/empty-5x5' }, model: { kind: 'transformer' } },
  tool: { env: { id: 'tools/calculator' }, model: { kind: 'transformer' } },
} as const;

describe('algorithm registry', () => {
  it('lists each algorithm once, in the config order; the group ones are the group list', () => {
    expect(ALGOS).toEqual(Object.keys(EXPECTED));
    expect(new Set(ALGOS).size).toBe(ALGOS.length);
    expect(GROUP_ALGOS).toEqual(Object.keys(EXPECTED).filter((a) => EXPECTED[a][0]));
    for (const d of ALGO_DESCRIPTORS) expect(d.help.startsWith(`'${d.name}'`), d.name).toBe(true);
    expect(() => algoDescriptor('nope')).toThrow(/unknown algorithm 'nope'/);
  });

  it.each(Object.entries(EXPECTED))('%s: defaults, loss objective and critic', (name, [group, std, aggregation, epochs, objective, critic]) => {
    const r = parseAlgoConfig({ algo: name });
    if (!r.ok) throw new Error(r.messages.join('; '));
    expect([r.config.normalizeStd, r.config.aggregation, r.config.updateEpochs]).toEqual([std, aggregation, epochs]);
    expect((trainStepOptions(r.config, 8).loss as { objective?: string }).objective).toBe(objective);
    expect([algoDescriptor(name).group, algoDescriptor(name).critic]).toEqual([group, critic]);
    // Only the std-dividing algorithms accept normalizeStd: true.
    expect(parseAlgoConfig({ algo: name, normalizeStd: true }).ok).toBe(std);
  });

  it.each(Object.keys(EXPECTED))('%s runs where its descriptor allows, and is refused with its reason elsewhere', (name) => {
    for (const [target, run] of Object.entries(RUNS)) {
      for (const mode of ['sync', 'async'] as const) {
        const algo = EXPECTED[name][0] ? { algo: name, groupSize: 2 } : { algo: name };
        const r = parseRunConfig({ ...run, algo, rollout: { mode, groups: 2, episodes: 4, learnerBatch: 512 } });
        const msgs = r.ok ? [] : r.messages;
        const refusedHere = REFUSED[name]?.includes(target) ?? false;
        const refusedAsync = mode === 'async' && (REFUSED[name]?.includes('async') ?? false);
        expect(msgs.some((m) => m.startsWith('algo.algo: ')), `${name} on ${target} ${mode}: ${msgs.join('; ')}`).toBe(refusedHere);
        if (refusedHere) expect(msgs).toContain(`algo.algo: ${algoDescriptor(name).refuses![target as 'tool']}`);
        if (refusedAsync) expect(msgs).toContain(`rollout.mode: ${algoDescriptor(name).refuses!.async}`);
        // Nothing else refuses a registered algorithm on grid MLP in sync mode.
        if (target === 'grid-mlp' && mode === 'sync') expect(msgs, name).toEqual([]);
      }
    }
  });

  it('a run names its target by env family and policy', () => {
    expect([algoTarget('grid', 'mlp'), algoTarget('grid', 'transformer'), algoTarget('tool', 'transformer')]).toEqual(['grid-mlp', 'grid-text', 'tool']);
  });
});
