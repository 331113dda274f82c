/**
 * Chance under the mask: an agent that samples uniformly among the tokens the env's action grammar
 * allows (the same mask and per-action token budget as rollout.constrained) plays the CLI's held-out
 * seeds; prints its success rate per env config. What a policy scores with no learning at all.
 *
 *   npx tsx bench/learn/weakwarm/uniformBaseline.ts [episodes=100]
 */
import { EOA, VOCAB, VOCAB_SIZE } from '../../../src/core/text/codec.ts';
import { matcherFor, maskHas } from '../../../src/core/text/grammar.ts';
import { makeEnv } from '../../../src/core/envs/index.ts';
import type { ToolEnv } from '../../../src/core/envs/types.ts';
import { Rng, heldOutSeeds } from '../../../src/core/util/rng.ts';

/** [label, env id, kwargs, maxActionTokens]: the configs of the presets and measurements beside this file. */
const CONFIGS: [string, string, Record<string, number | boolean>, number][] = [
  ['flaky-api-scratch-grpo (keys 1)', 'tools/flaky-api', { keys: 1, maxTurns: 6 }, 16],
  ['kv-lookup-scratch-grpo (no distractors)', 'tools/kv-lookup', { hops: 2, maxTurns: 5, distractors: false }, 16],
  ['kv-lookup, distractors on (scratch model budget)', 'tools/kv-lookup', { hops: 2, maxTurns: 5 }, 16],
  ['kv-lookup-grpo (distractors on)', 'tools/kv-lookup', { hops: 2 }, 32],
  ['calc-grpo', 'tools/calculator', {}, 32],
  ['flaky-api, 20 keys', 'tools/flaky-api', {}, 24],
];

function successRate(id: string, kwargs: Record<string, number | boolean>, budget: number, seeds: number[], rng: Rng): number {
  const env = makeEnv(id, kwargs) as unknown as ToolEnv;
  let wins = 0;
  for (const seed of seeds) {
    env.reset({ seed });
    for (let done = false; !done; ) {
      const m = matcherFor(env.actionGrammar!());
      let text = '';
      // budget tokens per action, <eoa> included, as in the rollout.
      for (let used = 0; used < budget; used++) {
        const bits = m.mask(text, budget - used);
        const allowed: number[] = [];
        for (let v = 0; v < VOCAB_SIZE; v++) if (maskHas(bits, 0, v)) allowed.push(v);
        const tok = rng.choice(allowed);
        if (tok === EOA) break;
        text += VOCAB[tok];
      }
      const r = env.step(text);
      if (r.info.success) wins++;
      done = r.terminated || r.truncated;
    }
  }
  return wins / seeds.length;
}

const n = Number(process.argv[2] ?? 100);
const seeds = heldOutSeeds(n);
for (const [label, id, kwargs, budget] of CONFIGS) {
  console.log(`${label}: uniform over allowed tokens, ${n} held-out seeds: success ${successRate(id, kwargs, budget, seeds, new Rng(1)).toFixed(2)}`);
}
