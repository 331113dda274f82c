import { describe, expect, it } from 'vitest';
import { prewarmThreads } from './prewarm.ts';
import type { Store } from '../storeTypes.ts';

type S = Parameters<typeof prewarmThreads>[0];

const ready = (cores: number, isolated: boolean, threads: number | null = null): Store['backend'] =>
  ({
    status: 'ready',
    forced: null,
    threads,
    report: { chosen: 'auto', webgpu: {}, wasm: { crossOriginIsolated: isolated, threads: 1, simd: true }, hardwareConcurrency: cores },
  }) as unknown as Store['backend'];

const state = (over: Partial<{ backend: Store['backend']; view: string; status: string; backendChoice: string; workers: number }>): S =>
  ({
    backend: over.backend ?? ready(8, true),
    view: over.view ?? 'train',
    status: over.status ?? 'idle',
    draft: { backend: over.backendChoice ?? 'auto', rollout: { workers: over.workers ?? 0 } },
  }) as unknown as S;

describe('prewarmThreads', () => {
  it('warms on the idle Train view with the threads the run will get', () => {
    expect(prewarmThreads(state({}))).toBe(4); // 8 cores, isolated: cores − 1, at most 4
    expect(prewarmThreads(state({ backend: ready(4, true), workers: 1 }))).toBe(2);
    expect(prewarmThreads(state({ backend: ready(2, true) }))).toBe(1);
    expect(prewarmThreads(state({ backend: ready(8, false) }))).toBe(1);
    expect(prewarmThreads(state({ backend: ready(8, true, 3) }))).toBe(3); // ?threads=3
    expect(prewarmThreads(state({ backendChoice: 'wasm' }))).toBe(4);
  });

  it('does nothing elsewhere, while a run holds the worker, before detection, or for a WebGPU run', () => {
    expect(prewarmThreads(state({ view: 'environments' }))).toBeNull();
    expect(prewarmThreads(state({ status: 'running' }))).toBeNull();
    expect(prewarmThreads(state({ status: 'finished' }))).toBeNull();
    expect(prewarmThreads(state({ backend: { status: 'detecting' } as Store['backend'] }))).toBeNull();
    expect(prewarmThreads(state({ backendChoice: 'webgpu' }))).toBeNull();
  });
});
