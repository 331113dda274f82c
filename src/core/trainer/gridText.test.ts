/**
 * Run configs for grid envs played as text: a transformer pairs with a grid env (through
 * envs/grid/textAdapter.ts), PPO is accepted for token policies, and the combinations the
 * synchronous token trainer cannot run are refused with a message naming the field.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../presets/schema.ts';

const gridText = { env: { id: 'grid/memory', kwargs: { size: 8, viewSize: 3, maxSteps: 12 } }, model: { kind: 'transformer', context: 256 }, algo: { algo: 'ppo' } };

describe('grid envs with a transformer (text)', () => {
  it('accepts PPO with a warm start, with the token learner batch default', () => {
    const r = parseRunConfig({ ...gridText, warmStart: { steps: 10 } });
    expect(r.ok ? null : r.messages).toBeNull();
    expect(r.ok && r.config.rollout.learnerBatch).toBe(16);
    expect(r.ok && r.config.algo.updateEpochs).toBe(4);
    // The auxiliary observation loss of the warm start is opt-in.
    expect(r.ok && r.config.warmStart?.observationWeight).toBe(0);
    const o = parseRunConfig({ ...gridText, warmStart: { steps: 10, observationWeight: 1 } });
    expect(o.ok && o.config.warmStart?.observationWeight).toBe(1);
    expect(parseRunConfig({ ...gridText, warmStart: { steps: 10, observationWeight: -1 } }).ok).toBe(false);
  });

  it('refuses async rollouts and rollout workers, naming each field; a shaping schedule runs (without potential shaping)', () => {
    const schedule = { stages: [{ name: 'only', weights: { format: 0.1 } }] };
    const r = parseRunConfig({ ...gridText, rollout: { mode: 'async', workers: 2 }, schedule });
    expect(r.ok).toBe(false);
    const msgs = r.ok ? [] : r.messages;
    expect(msgs.some((m) => m.startsWith('rollout.mode:'))).toBe(true);
    expect(msgs.some((m) => m.startsWith('rollout.workers:'))).toBe(true);
    expect(msgs.some((m) => m.startsWith('schedule'))).toBe(false);
    expect(parseRunConfig({ ...gridText, schedule }).ok).toBe(true);
  });

  it('accepts a warm start for the mlp (behaviour cloning of the grid expert), and PPO for tool envs too', () => {
    const mlp = parseRunConfig({ env: { id: 'grid/memory' }, model: { kind: 'mlp' }, algo: { algo: 'ppo' }, warmStart: { steps: 10 } });
    expect(mlp.ok ? [] : mlp.messages).toEqual([]);
    expect(parseRunConfig({ env: { id: 'tools/calculator' }, model: { kind: 'transformer' }, algo: { algo: 'ppo' } }).ok).toBe(true);
  });
});
