/**
 * QuickJS's limits as they really bound: its own memory limit counts 8 bytes per allocation in
 * this build (no malloc_usable_size), so the sandbox measures the heap itself; and a module that
 * throws as it loads leaves QuickJS clean (no emscripten abort printed beside the right message).
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { CodeEnvError, makeCodeEnv } from '../../core/envs/code/index.ts';
import { loadCodeEnvs } from './index.ts';
import { quickJsMemoryBytes } from './quickjs.ts';

const ROOM = readFileSync(new URL('../../../examples/envs/empty-room.js', import.meta.url), 'utf8');
const thrown = (f: () => unknown): Error => {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('it did not throw');
};

// A long deadline: the memory check, not the clock, must stop these.
beforeAll(() => loadCodeEnvs({ callTimeoutMs: 30_000 }));

describe('QuickJS code envs: limits', () => {
  it('a module holding 1 KB strings is stopped near its 64 MiB, not at the thread\'s 512 MiB of WebAssembly memory', () => {
    const code = ROOM.replace('export function reset(_seed) {', "export function reset(_seed) {\n  if (_seed === 9) { globalThis.k = []; for (;;) globalThis.k.push('x'.repeat(1000) + globalThis.k.length); }");
    const env = makeCodeEnv({ code }, undefined, { checking: true });
    env.reset({ seed: 1 });
    const before = quickJsMemoryBytes();
    const e = thrown(() => env.reset({ seed: 9 })) as CodeEnvError;
    const grown = (quickJsMemoryBytes() - before) / 1048576;
    console.log(`1 KB strings: stopped after the WebAssembly memory grew ${grown.toFixed(0)} MiB: ${e.message}`);
    expect(e).toBeInstanceOf(CodeEnvError);
    expect(e.rule).toBe('memory');
    expect(e.message).toMatch(/^reset\(\) ran out of memory \(limit 64 MiB\): it held (6[4-9]|7\d) MiB when it was stopped \(line 77\)$/);
    // Before: 480 MiB (the thread's whole memory) before "out of memory".
    expect(grown).toBeLessThan(160);
  });

  it('a module that throws as it loads gets its message and nothing else on stderr; QuickJS goes on', () => {
    const writes: string[] = [];
    const spies = [vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => (writes.push(String(s)), true)), vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void writes.push(a.join(' '))), vi.spyOn(console, 'warn').mockImplementation((...a: unknown[]) => void writes.push(a.join(' ')))];
    let e: Error;
    try {
      e = thrown(() => makeCodeEnv({ code: ROOM.replace('const SIZE = 8,', "throw new Error('no room today');\nconst SIZE = 8,") }, undefined, { checking: true }));
    } finally {
      for (const s of spies) s.mockRestore();
    }
    expect(e.message).toMatch(/^evaluating the module threw Error: no room today \(line \d+\)$/);
    expect(writes.join('')).not.toMatch(/Aborted|Assertion failed/);
    const ok = makeCodeEnv({ code: ROOM }, undefined, { checking: true });
    expect(ok.reset({ seed: 0 }).obs).toBeDefined();
  });
});
