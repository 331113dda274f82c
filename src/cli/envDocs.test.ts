import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { withEnvTable } from './envDocs.ts';

describe('README env kwargs table', () => {
  it('matches the env definitions (run npm run docs:envs after changing a kwarg)', () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(withEnvTable(readme)).toBe(readme);
    expect(readme).toMatch(/\| `grid\/door-key-6x6` \| `size` \| 6 \| 5\.\.64 \|/);
  });
});
