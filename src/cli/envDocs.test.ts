import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENV_DOC, withEnvTable } from './envDocs.ts';

describe('docs/envs.md env kwargs table', () => {
  it('matches the env definitions (run npm run docs:envs after changing a kwarg)', () => {
    const readme = readFileSync(ENV_DOC, 'utf8');
    expect(withEnvTable(readme)).toBe(readme);
    expect(readme).toMatch(/\| `grid\/door-key-6x6` \| `size` \| 6 \| 5\.\.64 \|/);
  });
});
