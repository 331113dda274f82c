/**
 * Resume in the Runs view on a page that has not loaded the code-env sandbox: a saved code-env
 * run resumes (its config checks once the sandbox is loaded), as a built-in env's run does.
 */
import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import emptyPreset from '../../../presets/grid-empty-8x8-grpo.json';
import { codeEnvEngineLoaded } from '../../core/envs/code/codeEnv.ts';
import type { Checkpoint } from '../../core/runs/checkpoint.ts';
import { newRunMeta, RunStore } from '../../runtime/storage/runStore.ts';
import { loadPresets } from './config.ts';
import { resumable } from './resumable.ts';

const ROOM = readFileSync(new URL('../../../examples/envs/empty-room.js', import.meta.url), 'utf8');

describe('resumable', () => {
  it('a saved code-env run resumes on a page that had not loaded the sandbox', async () => {
    const base = loadPresets([emptyPreset]).presets[0].config;
    const config = { ...base, env: { id: 'code/custom', kwargs: { code: ROOM } } };
    const store = new RunStore(`resumable-${Math.random()}`);
    const meta = newRunMeta(config, { name: 'my room' });
    await store.createRun(meta);
    await store.putCheckpoint(meta.id, { iteration: 3 } as unknown as Checkpoint);
    expect(codeEnvEngineLoaded()).toBe(false);
    const r = await resumable(store, meta.id, null, 'wasm');
    expect(r.ok ? r.validation.ok : r.message).toBe(true);
    expect(r.ok && r.draft.env).toEqual({ id: 'code/custom', kwargs: { code: ROOM } });
  });

  it('a code env that no longer loads is refused with its reason', async () => {
    const base = loadPresets([emptyPreset]).presets[0].config;
    const store = new RunStore(`resumable-${Math.random()}`);
    const meta = newRunMeta({ ...base, env: { id: 'code/custom', kwargs: { code: 'export const env = 1;' } } }, { name: 'broken' });
    await store.createRun(meta);
    await store.putCheckpoint(meta.id, { iteration: 3 } as unknown as Checkpoint);
    const r = await resumable(store, meta.id, null, 'wasm');
    expect(r.ok ? 'ok' : r.message).toMatch(/^"broken" has a config this playground no longer accepts: .*env/);
  });
});
