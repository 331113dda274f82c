import { defineConfig } from 'vitest/config';

/** End-to-end tests: a real Chromium against the built app served from a sub-path. */
export default defineConfig({
  test: {
    include: ['e2e/**/*.e2e.ts'],
    globalSetup: ['e2e/global-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 300_000,
    // One browser at a time: these machines have 2 cores and software WebGPU is heavy.
    fileParallelism: false,
    pool: 'forks',
  },
});
