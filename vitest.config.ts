import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'bench/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    pool: 'forks',
    // Vitest's default (cores − 1) runs one file at a time on a 2-core machine. The heavy files
    // are single-threaded WASM training runs: on a quiet 2-core machine two at a time took
    // src/runtime/engine from 183 s to 143 s. (On a machine loaded by other jobs it was slower.)
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
