/**
 * Resume of a code-env run when the sandbox itself fails to load (e.g. WebAssembly out of
 * memory): a message naming the run and the reason, not an unhandled rejection.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it, vi } from 'vitest';
import emptyPreset from '../../../presets/grid-empty-8x8-grpo.json';
import type { Checkpoint } from '../../core/runs/checkpoint.ts';
import { newRunMeta, RunStore } from '../../runtime/storage/runStore.ts';
import { loadPresets } from './config.ts';
import { resumable } from './resumable.ts';

vi.mock('../../runtime/codeEnv/index.ts', () => ({ loadCodeEnvs: () => Promise.reject(new Error('WebAssembly.instantiate(): Out of memory')) }));

describe('resumable, sandbox load failure', () => {
  it('refuses with the run name and the reason', async () => {
    const base = loadPresets([emptyPreset]).presets[0].config;
    const store = new RunStore(`resumable-sb-${Math.random()}`);
    const meta = newRunMeta({ ...base, env: { id: 'code/custom', kwargs: { code: 'export const env = 1;' } } }, { name: 'my room' });
    await store.createRun(meta);
    await store.putCheckpoint(meta.id, { iteration: 3 } as unknown as Checkpoint);
    const r = await resumable(store, meta.id, null, 'wasm');
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : [r.level, r.message]).toEqual(['error', '"my room" trains a code env, and its sandbox did not load: WebAssembly.instantiate(): Out of memory. Reload the page and try again.']);
  });
});
