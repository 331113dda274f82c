import { describe, expect, it } from 'vitest';
import { loadRunConfig } from '../../cli/presets.ts';
import { createTrainer } from '../../core/trainer/createTrainer.ts';
import { loadNodeEngine } from '../engine/node.ts';
import { idleSessionCount, releaseIdleSessions } from './session.ts';

// Timing marks are not compared: they differ run to run.
const numbers = (m: Readonly<Record<string, number>>) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/') && !k.startsWith('timing/')));

describe('sessions of a released trainer are reused by the next with the same graph', () => {
  it('a second trainer of the same config (Reset, then Start) reuses them and trains bit-identically', { timeout: 120_000 }, async () => {
    const config = { ...loadRunConfig('grid-empty-8x8-grpo'), iterations: 2 };
    const engine = await loadNodeEngine('ort-web-wasm');
    await releaseIdleSessions();
    const runOnce = async () => {
      const t = await createTrainer(config, engine);
      const out = [numbers((await t.step()).metrics), numbers((await t.step()).metrics)];
      await t.release();
      return out;
    };
    const first = await runOnce();
    const kept = idleSessionCount();
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(4);
    const second = await runOnce();
    // Nothing new was built: the second trainer took the idle sessions and gave them back.
    expect(idleSessionCount()).toBe(kept);
    expect(second).toEqual(first);
    await releaseIdleSessions();
    expect(idleSessionCount()).toBe(0);
  });
});
