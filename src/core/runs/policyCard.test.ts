/**
 * policy.json describes policy.onnx well enough to use it without this repository: the grid card's
 * recipe, followed literally, rebuilds the exact input the trainer feeds; the IO names and shapes
 * are the exported graph's; a token policy's card lists the vocabulary.
 */
import { describe, expect, it } from 'vitest';
import '../envs/index.ts';
import { makeEnv } from '../envs/index.ts';
import type { GridObs } from '../envs/types.ts';
import { encodeGridObs, gridFeatureSize } from '../rollout/features.ts';
import { parseRunConfig, type RunConfig } from '../presets/schema.ts';
import { encode, VOCAB } from '../text/codec.ts';
import { policyCard } from './policyCard.ts';

const cfg = (raw: unknown): RunConfig => {
  const r = parseRunConfig(raw);
  if (!r.ok) throw new Error(r.messages.join('; '));
  return r.config;
};

describe('policy.json', () => {
  it("a grid MLP's card: obs [1, 984] in, log-probs over the 7 named actions out, and a recipe that rebuilds the trainer's input", () => {
    const config = cfg({ env: { id: 'grid/door-key-6x6' }, model: { kind: 'mlp', hidden: [16], activation: 'tanh' }, algo: { algo: 'grpo' }, seed: 4 });
    const card = policyCard(config, { iteration: 12, rewardCodeHash: 'abcdef012345' });
    expect(card).toMatchObject({ format: 'agentic-rl-playground/policy', env: { id: 'grid/door-key-6x6' }, iteration: 12, rewardCodeHash: 'abcdef012345', algo: 'grpo', seed: 4 });
    expect(card.onnx.inputs).toEqual([{ name: 'obs', dtype: 'float32', shape: [1, 984] }]);
    expect(card.onnx.outputs[0]).toMatchObject({ name: 'logprobs', shape: [1, 7] });
    expect(card.actions).toEqual({ kind: 'discrete', names: ['left', 'right', 'forward', 'pickup', 'drop', 'toggle', 'done'] });
    const o = card.observation as { viewSize: number; floats: number; cellTypes: string[]; cellColors: string[]; cellStates: string[]; headings: string[] };
    expect(o.floats).toBe(gridFeatureSize(o.viewSize));
    // Follow the card's words on a real observation: cell c fills [20c, 20c + 20) with one-hot
    // type (11), colour (6), state (3); the last 4 floats one-hot heading.
    const env = makeEnv('grid/door-key-6x6');
    let obs = env.reset({ seed: 3 }).obs as GridObs;
    for (const a of [2, 1, 2]) obs = env.step(a).obs as GridObs;
    const mine = new Float32Array(o.floats);
    for (let c = 0; c < o.viewSize * o.viewSize; c++) {
      mine[20 * c + obs.image[3 * c]] = 1;
      mine[20 * c + o.cellTypes.length + obs.image[3 * c + 1]] = 1;
      mine[20 * c + o.cellTypes.length + o.cellColors.length + obs.image[3 * c + 2]] = 1;
    }
    mine[o.floats - 4 + obs.direction] = 1;
    const trainer = new Float32Array(o.floats);
    encodeGridObs(obs, trainer);
    expect(Array.from(mine)).toEqual(Array.from(trainer));
    expect([o.cellTypes.length, o.cellColors.length, o.cellStates.length, o.headings.length]).toEqual([11, 6, 3, 4]);
  });

  it("a token policy's card: the decode step's inputs, and the vocabulary", () => {
    const config = cfg({ env: { id: 'tools/calculator' }, model: { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32 }, algo: { algo: 'grpo' } });
    const card = policyCard(config, { iteration: 3, rewardCodeHash: null });
    expect(card.actions).toEqual({ kind: 'tokens', vocabulary: VOCAB });
    expect(card.onnx.inputs.length).toBeGreaterThan(1);
    expect(card.onnx.inputs.every((t) => t.shape[0] === 1)).toBe(true);
    expect(card.observation).toMatchObject({ kind: 'tokens', context: 128, maxActionTokens: 32, framing: { episodeStart: ['<bos>', '<obs>'], afterAction: ['<obs>'], actionEnd: '<eoa>', ids: { pad: 0, bos: 1, eoa: 2, obs: 3, unk: 4 } } });
    // The card's tokenizer, followed as its rule says, gives the trainer's token ids (codec.encode).
    const o = card.observation as { tokenizer: { wordTokens: string[]; characterIds: { first: number; characters: string } } };
    const words = o.tokenizer.wordTokens.map((w) => ({ w, id: VOCAB.indexOf(w) })).sort((a, b) => b.w.length - a.w.length);
    const byCard = (text: string) => {
      const out: number[] = [];
      for (let i = 0; i < text.length; ) {
        const hit = words.find((x) => text.startsWith(x.w, i));
        const c = o.tokenizer.characterIds.characters.indexOf(text[i]);
        out.push(hit ? hit.id : c >= 0 ? o.tokenizer.characterIds.first + c : 4);
        i += hit ? hit.w.length : 1;
      }
      return out;
    };
    const text = 'task: what is 12 * 3?\nresult: 36 calc(12*3) answer(36) é';
    expect(byCard(text)).toEqual(encode(text, { unknown: 'unk' }));
    // What pos and the cache are: positions 0..context−1, caches [1, heads, context, head dim].
    expect(card.onnx.notes).toMatch(/pos int32 \[1\]: its 0-based position/);
    expect(card.onnx.inputs.find((t) => t.name === 'past.k.0')?.shape).toEqual([1, 2, 128, 8]);
  });
});
