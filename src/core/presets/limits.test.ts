/**
 * Configs a hostile or careless person can write: every size and scale is bounded with the
 * bound in the message, prototype keys are refused, and every problem of a file comes at once.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from './schema.ts';
import '../envs/index.ts';

const grid = { env: { id: 'grid/empty-8x8' }, model: { kind: 'mlp' }, algo: { algo: 'grpo' } };
const messages = (input: unknown): string[] => {
  const r = parseRunConfig(input);
  return r.ok ? [] : r.messages;
};

describe('config bounds', () => {
  it.each([
    [{ ...grid, algo: { algo: 'grpo', lr: 1e300 } }, /^algo\.lr: must be ≤ 1 \(Adam moves each weight/],
    [{ ...grid, algo: { algo: 'grpo', adamEps: 1e-300 } }, /^algo\.adamEps: must be ≥ 1e-12/],
    [{ ...grid, shaping: { progress: { weight: 1e308 } } }, /^shaping\.progress\.weight: must be ≤ 1000/],
    [{ ...grid, algo: { algo: 'grpo', groupSize: 1e6 } }, /^algo\.groupSize: must be ≤ 1024/],
    [{ ...grid, algo: { algo: 'grpo', groupSize: 1024 }, rollout: { groups: 512 } }, /^rollout\.groups × algo\.groupSize: at most 16,384 episodes per iteration \(got 524,288\)/],
    [{ ...grid, algo: { algo: 'ppo', updateEpochs: 1e6 } }, /^algo\.updateEpochs: must be ≤ 64/],
    [{ ...grid, env: { id: 'grid/empty-8x8', kwargs: { viewSize: 301 } } }, /^env: .*viewSize.*15/],
    [{ ...grid, model: { kind: 'mlp', hidden: [4096, 4096, 4096, 4096, 4096, 4096, 4096, 4096] } }, /^model: at most 20,000,000 parameters \(these sizes make about 117,440,512\)/],
    [{ env: { id: 'tools/calculator' }, model: { kind: 'transformer', context: 1024 }, algo: { algo: 'grpo' }, rollout: { learnerBatch: 1024 } }, /^rollout\.learnerBatch: learnerBatch × model\.context must be ≤ 131,072 tokens/],
    // GSPO's ratio is over a whole episode, in one train step: the learner batch must hold the longest.
    [{ ...grid, algo: { algo: 'gspo' }, rollout: { learnerBatch: 255 } }, /^rollout\.learnerBatch: gspo trains whole episodes per train step .* the longest, 256 steps \(grid\/empty-8x8's maxSteps\); got 255/],
  ])('%j is refused with its bound', (input, message) => {
    const m = messages(input);
    expect(m.some((x) => message.test(x)), m.join('\n')).toBe(true);
  });

  it('every preset-sized config still passes', () => {
    expect(messages({ ...grid, algo: { algo: 'grpo', lr: 1, adamEps: 1e-12, groupSize: 64 }, rollout: { groups: 256 } })).toEqual([]);
    expect(messages({ ...grid, algo: { algo: 'gspo' }, rollout: { learnerBatch: 256 } })).toEqual([]);
    expect(messages({ ...grid, algo: { algo: 'grpo' }, rollout: { learnerBatch: 64 } })).toEqual([]);
  });
});

describe('prototype keys', () => {
  it.each(['{"algo": {"algo": "grpo", "__proto__": {"lr": 5}}}', '{"constructor": {"x": 1}}', '{"shaping": {"outcome": {"prototype": 1}}}'])('%s is refused, not silently dropped', (text) => {
    const input = { ...grid, ...JSON.parse(text) };
    if ('algo' in JSON.parse(text)) input.algo = JSON.parse(text).algo;
    const m = messages(input);
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(/: the key '(__proto__|constructor|prototype)' is not allowed in a config$/);
  });
});

describe('every problem at once', () => {
  it('top-level, algo and shaping errors of one file come in one report', () => {
    const m = messages({ ...grid, iterations: -1, algo: { algo: 'grpo', lr: -1 }, shaping: { outcome: { weight: -2 } } });
    expect(m.map((x) => x.split(':')[0]).sort()).toEqual(['algo.lr', 'iterations', 'shaping.outcome.weight']);
  });

  it('a misspelt field does not hide an env kwarg out of range: misspelt hiden and learningRate beside size 2 on door-key', () => {
    const m = messages({ env: { id: 'grid/door-key-6x6', kwargs: { size: 2 } }, model: { kind: 'mlp', hiden: [32] }, algo: { algo: 'grpo', learningRate: 0.1 } });
    expect(m).toEqual([
      'model: Unrecognized key: "hiden"',
      'algo.learningRate: unknown field (misspelt, or not a setting of this algorithm config)',
      'env: grid/door-key-6x6: kwarg size = 2 is below the minimum 5',
    ]);
  });

  it('every bad env kwarg is named, not only the first the env meets', () => {
    expect(messages({ ...grid, env: { id: 'grid/door-key-6x6', kwargs: { size: 2, bogus: 1, maxSteps: 0 } } })).toEqual([
      'env: grid/door-key-6x6: kwarg size = 2 is below the minimum 5',
      'env: grid/door-key-6x6: unknown kwarg bogus; known: size, maxSteps, viewSize',
      expect.stringMatching(/^env: grid\/door-key-6x6: kwarg maxSteps/),
    ]);
    // With another problem beside them, too; an unknown env is named once.
    expect(messages({ ...grid, iterations: 0, env: { id: 'grid/door-key-6x6', kwargs: { size: 2, bogus: 1 } } })).toHaveLength(3);
    expect(messages({ ...grid, iterations: 0, env: { id: 'grid/nope', kwargs: { a: 1, b: 2 } } }).filter((x) => x.startsWith('env:'))).toEqual([expect.stringMatching(/^env: unknown env "grid\/nope"/)]);
  });
});
