/**
 * ARCHITECTURE.md's generated tables match the registries (`npm run docs:tables` rewrites them),
 * and the generator reads the registries rather than a list of its own: the rows are checked
 * against facts written here by hand from the descriptor and env files.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ALGO_DESCRIPTORS } from '../core/algos/registry/index.ts';
import { envIds } from '../core/envs/registry.ts';
import { ARCH_DOC, algoTableMarkdown, envTableMarkdown, withTables } from './archTables.ts';

const doc = readFileSync(ARCH_DOC, 'utf8');

/** The cells of the table row whose first cell is `name` in code quotes. */
function row(table: string, name: string): string[] {
  const line = table.split('\n').find((l) => l.startsWith(`| \`${name}\` |`));
  if (!line) throw new Error(`no row for ${name}`);
  return line.split(' | ').map((c) => c.replace(/^\| |\s\|$/g, '').trim());
}

describe('ARCHITECTURE.md generated tables', () => {
  it('are what the registries say (run npm run docs:tables after changing an algorithm, env or metric)', () => {
    expect(withTables(doc)).toBe(doc);
  });

  it('have one row per registered algorithm and env, in registry order', () => {
    const algoRows = algoTableMarkdown().split('\n').slice(2);
    expect(algoRows.map((l) => l.split(' | ')[0].slice(3, -1))).toEqual(ALGO_DESCRIPTORS.map((d) => d.name));
    const envRows = envTableMarkdown().split('\n').slice(2);
    expect(envRows.map((l) => l.split(' | ')[0].slice(3, -1))).toEqual(envIds());
  });

  it('state what the descriptor files declare (written here by hand)', () => {
    const algos = algoTableMarkdown();
    // grpo.ts: group-relative, divided by the group's std; ppo.ts: GAE over a value head, 4 epochs.
    expect(row(algos, 'grpo').slice(1, 6)).toEqual(['episode rewards', 'clip / token', 'yes, ÷ std', 'no', '1']);
    expect(row(algos, 'ppo').slice(1, 6)).toEqual(['GAE over a value head', 'clip / token', 'no', 'yes', '4']);
    // gspo.ts: its own objective and 'sequence' aggregation; remax.ts: refuses async, with the reason.
    expect(row(algos, 'gspo')[2]).toBe('gspo / sequence');
    expect(row(algos, 'remax')[7]).toMatch(/^async: .*greedy/);
    expect(row(algos, 'gigpo')[6]).toContain('`groups/step_groups_mean`');
  });

  it('state what the env files declare (written here by hand)', () => {
    const envs = envTableMarkdown();
    // switch-door.ts: two agents taking turns, 7 grid actions, 96 steps.
    expect(row(envs, 'grid/switch-door').slice(2)).toEqual(['grid', '{image: Box[7×7×3], direction: Discrete(4), text: Text(≤ 217)}', 'Discrete(7)', '96', '[0, 1]', '2']);
    // flaky-api.ts: a text env whose calls cost 0.05 each, 8 turns.
    expect(row(envs, 'tools/flaky-api').slice(2, 7)).toEqual(['tool', '{text: Text(≤ 240)}', 'Text(≤ 80)', '8', '[-0.05, 1]']);
  });

  it('a stale or missing table is caught', () => {
    const stale = doc.replace('| `grpo` |', '| `grpo_old` |');
    expect(stale).not.toBe(doc);
    expect(withTables(stale)).not.toBe(stale);
    expect(() => withTables(doc.replace('<!-- /tables:algos -->', ''))).toThrow(/lacks the markers/);
  });
});
