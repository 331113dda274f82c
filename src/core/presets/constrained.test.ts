/** rollout.constrained: default off, accepted on tool envs, refused with a clear message where no action grammar exists. */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from './schema.ts';

const tool = { env: { id: 'tools/flaky-api' }, model: { kind: 'transformer' }, algo: { algo: 'grpo' } };

describe('rollout.constrained', () => {
  it('is off by default and accepted for a tool env', () => {
    const off = parseRunConfig(tool);
    expect(off.ok && off.config.rollout.constrained).toBe(false);
    const on = parseRunConfig({ ...tool, rollout: { constrained: true } });
    expect(on.ok, on.ok ? '' : on.messages.join('; ')).toBe(true);
  });

  it('names the field and the reason for a grid env played as text, which has no action grammar', () => {
    const r = parseRunConfig({ env: { id: 'grid/empty-8x8' }, model: { kind: 'transformer' }, algo: { algo: 'grpo' }, rollout: { constrained: true } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.messages.join('\n')).toMatch(/rollout\.constrained: grid\/empty-8x8 \(a grid env\) has no action grammar/);
  });

  it('refuses an mlp policy (nothing to mask token by token)', () => {
    const r = parseRunConfig({ env: { id: 'grid/empty-8x8' }, model: { kind: 'mlp' }, algo: { algo: 'grpo' }, rollout: { constrained: true } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.messages.join('\n')).toMatch(/rollout\.constrained: constrained decoding masks a token policy/);
  });
});
