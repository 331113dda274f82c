/**
 * A checkpoint whose tensors belong to another model is refused where it enters, with the tensor
 * named: on --resume (nothing written) and on import (checkpointFitProblems, what the Runs view
 * calls), never later at Resume with an engine error.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from './train.ts';
import { parseCliFolder, parseRunFile, runToFile } from '../core/runs/format.ts';
import { checkpointFitProblems } from '../core/runs/policyExport.ts';

const SMALL = { id: 'fit', env: { id: 'grid/empty-8x8' }, model: { kind: 'mlp', hidden: [16], activation: 'tanh' }, algo: { algo: 'grpo', groupSize: 8, lr: 0.001 }, rollout: { groups: 2, learnerBatch: 128 }, seed: 1 };

describe('a checkpoint of another model', () => {
  it('is refused on --resume and on import, naming the tensor; a fitting one passes', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fit-'));
    const cfg = join(dir, 'small.json');
    writeFileSync(cfg, JSON.stringify(SMALL));
    const a = join(dir, 'a');
    expect(await main(['--config', cfg, '--iterations', '1', '--out', a, '--quiet'])).toBe(0);
    const read = parseCliFolder(readdirSync(a).map((f) => ({ name: f, text: readFileSync(join(a, f), 'utf8') })), null);
    if (!read.ok) throw new Error(read.messages.join('\n'));
    expect(checkpointFitProblems(read.run.config, read.run.checkpoint!)).toEqual([]);
    // The same file with the model widened: the weights no longer fit.
    const other = { ...read.run, config: { ...read.run.config, model: { ...read.run.config.model, hidden: [32] } } };
    const file = join(dir, 'other.run.json');
    writeFileSync(file, runToFile(other));
    const parsed = parseRunFile(readFileSync(file, 'utf8'), 'other.run.json');
    if (!parsed.ok) throw new Error(parsed.messages.join('\n'));
    const problems = checkpointFitProblems(parsed.run.config, parsed.run.checkpoint!, 'other.run.json: checkpoint');
    expect(problems[0]).toMatch(/^other\.run\.json: checkpoint\.learner\.tensors\.\S+: has \d+ values, the config's model needs \d+ \(shape \[/);
    const out = join(dir, 'never');
    await expect(main(['--resume', file, '--iterations', '3', '--out', out, '--quiet'])).rejects.toThrow(/the checkpoint does not fit the run's config:\n {2}- checkpoint\.learner\.tensors\./);
    expect(existsSync(out)).toBe(false);
  });
});
