/**
 * examples/run-policy.mjs runs an exported token policy from policy.json and policy.onnx alone,
 * against the env server: played greedily on the held-out seeds, it writes exactly the actions
 * the trainer's own greedy evaluation wrote for the same weights (`npm run train -- --eval`,
 * eval-episodes.jsonl 'after RL'). A script that got the framing, the tokenizer, the position
 * input or the cache hand-off wrong writes other tokens.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { main as train } from './train.ts';
import { startServer } from '../server/server.ts';

describe('examples/run-policy.mjs', () => {
  it('plays a token policy from policy.json alone: the greedy actions of the trainer, turn after turn', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'run-policy-'));
    // A long context, so episodes last several turns (the cache carries across replies).
    const config = { id: 'calc-tiny', env: { id: 'tools/calculator' }, model: { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 512 }, algo: { algo: 'grpo', groupSize: 2 }, rollout: { groups: 2, learnerBatch: 4, maxActionTokens: 12 }, iterations: 1, seed: 5 };
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    const out = join(dir, 'run');
    expect(await train(['--config', join(dir, 'config.json'), '--out', out, '--eval', '4', '--quiet'])).toBe(0);
    const expected = readFileSync(join(out, 'eval-episodes.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { when: string; temperature: number; seed: number; actions: string[]; success: boolean })
      .filter((e) => e.when === 'after RL' && e.temperature === 0);
    expect(expected).toHaveLength(4);
    expect(Math.max(...expected.map((e) => e.actions.length))).toBeGreaterThan(1);
    const server = await startServer({ envs: ['tools/calculator'], host: '127.0.0.1', port: 0, latency: 'skip' });
    try {
      const { stdout } = await promisify(execFile)('node', ['examples/run-policy.mjs', out, '--url', server.url, '--episodes', '4', '--seed', String(expected[0].seed), '--greedy'], { timeout: 120_000 });
      const got = JSON.parse(stdout.trim().split('\n').at(-1)!) as { episodes: { seed: number; actions: string[]; success: boolean }[] };
      expect(got.episodes.map((e) => ({ seed: e.seed, actions: e.actions, success: e.success }))).toEqual(expected.map((e) => ({ seed: e.seed, actions: e.actions, success: e.success })));
    } finally {
      await server.close();
    }
  });
});
