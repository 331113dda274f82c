/**
 * `npm run docs:tables`: rewrites ARCHITECTURE.md's generated tables from the registries, so the
 * document cannot drift from the code: the algorithms (src/core/algos/registry/), the envs
 * (src/core/envs/registry.ts, each made with its default kwargs) and the metric keys
 * (src/core/metrics/registry.ts). Each table sits between `<!-- tables:NAME -->` and
 * `<!-- /tables:NAME -->`; a unit test fails when a committed table differs from what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { ALGO_DESCRIPTORS } from '../core/algos/registry/index.ts';
import type { AlgoDescriptor } from '../core/algos/registry/types.ts';
import '../core/envs/index.ts';
import { envSpecs } from '../core/envs/registry.ts';
import type { Space } from '../core/envs/spaces.ts';
import { metricGroupTableMarkdown } from '../core/metrics/table.ts';

/** The document the tables live in, relative to the repository root. */
export const ARCH_DOC = 'ARCHITECTURE.md';

/** A table cell: pipes escaped so a doc's |x| does not split the row. */
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (s: string) => `\`${s}\``;

/** How each advantage kind reads in the table: what the estimator needs from collection. */
const ADVANTAGE_WORDS: Record<AlgoDescriptor['advantage']['kind'], string> = {
  episode: 'episode rewards',
  gae: 'GAE over a value head',
  'step-groups': 'episode + step groups (anchor states)',
  'greedy-baseline': 'greedy episode per group',
  'turn-credit': 'episode + per-turn rewards (infos)',
};

function refusals(d: AlgoDescriptor): string {
  const r = Object.entries(d.refuses ?? {});
  return r.length === 0 ? '—' : r.map(([where, why]) => `${where}: ${why}`).join('; ');
}

/** One row per registered algorithm, in registry order. */
export function algoTableMarkdown(): string {
  const rows = ALGO_DESCRIPTORS.map((d: AlgoDescriptor) => {
    const own = [...(d.fields ?? []), ...(d.metrics ?? [])].map(code).join(', ');
    return `| ${code(d.name)} | ${ADVANTAGE_WORDS[d.advantage.kind]} | ${d.loss.objective} / ${d.loss.aggregation} | ${d.group ? (d.groupStd ? 'yes, ÷ std' : 'yes') : 'no'} | ${d.critic ? 'yes' : 'no'} | ${d.updateEpochs} | ${cell(own)} | ${cell(refusals(d))} |`;
  });
  return [
    '| algo | advantages from | loss objective / default aggregation | group | critic | epochs | own fields and metric keys | refuses |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** A space in a few words: `Discrete(7)`, `Text(≤ 64)`, `Box[4]`, or a dict's fields. */
export function spaceWords(s: Space): string {
  switch (s.kind) {
    case 'discrete':
      return `Discrete(${s.n})`;
    case 'text':
      return `Text(≤ ${s.maxLength})`;
    case 'box':
      return `Box[${s.shape.join('×')}]`;
    case 'dict':
      return `{${Object.entries(s.spaces).map(([k, v]) => `${k}: ${spaceWords(v)}`).join(', ')}}`;
  }
}

/** One row per listed env, made with its default kwargs (the kwargs themselves: docs/envs.md). */
export function envTableMarkdown(): string {
  const rows = envSpecs().map((s) => {
    const agents = s.agents ? s.agents.length : 1;
    return `| ${code(s.id)} | ${cell(s.title)} | ${s.family} | ${cell(spaceWords(s.observationSpace))} | ${cell(spaceWords(s.actionSpace))} | ${s.maxSteps} | [${s.rewardRange[0]}, ${s.rewardRange[1]}] | ${agents} |`;
  });
  return ['| env | title | family | observation | action | max steps (turns) | step reward range | agents |', '|---|---|---|---|---|---|---|---|', ...rows].join('\n');
}

/** The generated blocks, by marker name. */
export const TABLES: Record<string, () => string> = {
  algos: algoTableMarkdown,
  envs: envTableMarkdown,
  metrics: metricGroupTableMarkdown,
};

/** `doc` with every marked block replaced by its current table; throws when a marker is missing. */
export function withTables(doc: string): string {
  let out = doc;
  for (const [name, table] of Object.entries(TABLES)) {
    const begin = `<!-- tables:${name} -->`;
    const end = `<!-- /tables:${name} -->`;
    const a = out.indexOf(begin);
    const b = out.indexOf(end);
    if (a < 0 || b < a) throw new Error(`${ARCH_DOC} lacks the markers ${begin} … ${end}`);
    out = `${out.slice(0, a + begin.length)}\n${table()}\n${out.slice(b)}`;
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const doc = readFileSync(ARCH_DOC, 'utf8');
  const next = withTables(doc);
  writeFileSync(ARCH_DOC, next);
  console.log(next === doc ? `${ARCH_DOC}: the tables are up to date` : `${ARCH_DOC}: tables rewritten`);
}
