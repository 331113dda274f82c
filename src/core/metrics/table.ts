/**
 * The registry as Markdown: ARCHITECTURE.md's table of metric groups, docs/metrics.md's table of every
 * key and docs/headless.md's table of TRL / veRL names (written by `npm run docs:metrics`; a test
 * fails when any is out of date).
 */
import { METRICS, type MetricDecl } from './registry.ts';
import { ENV_FAMILIES, envFamily } from '../envs/families.ts';

const ALL: readonly MetricDecl[] = METRICS;

/** A table cell: pipes escaped (docs say |advantage|), code spans for names. */
const cell = (s: string) => s.replace(/\|/g, '\\|');
const code = (s: string | undefined) => (s ? `\`${s}\`` : '');

/** Which runs log a key, in words. */
function runs(d: MetricDecl): string {
  if (d.stream === 'chart') return 'none: drawn by the app';
  const fam = d.families.length === ENV_FAMILIES.length ? null : d.families[0];
  const pol = d.policies.length === 2 ? null : d.policies[0];
  let who: string;
  if (!fam && !pol) who = 'all runs';
  else if (!fam) who = pol === 'step' ? 'grid MLP runs' : 'token runs';
  else if (envFamily(fam).observation === 'text') who = `${fam} runs`;
  else who = pol === 'step' ? 'grid MLP runs' : pol === 'token' ? 'grids as text' : 'grid runs';
  if (d.stream === 'warm-start') who += ', each warm-start step';
  return d.when ? `${who}; ${d.when}` : who;
}

/** Every declared key: key, unit, the runs that log it, its meaning, and its TRL and veRL names. */
export function metricTableMarkdown(): string {
  const rows = ALL.map((d) => {
    const meaning = d.anchorNote ? `${d.doc} (anchors: ${d.anchorNote})` : d.doc;
    return `| ${code(d.key)} | ${d.unit} | ${cell(runs(d))} | ${cell(meaning)} | ${code(d.trl)} | ${code(d.verl)} |`;
  });
  return ['| key | unit | logged by | meaning | TRL | veRL |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

/** The group of a key: its first path segment (`reward/mean` -> `reward`). */
const groupOf = (key: string) => key.split('/')[0];

/**
 * One row per key group, in registry order: the group, its keys (the part after the group, with
 * their units) and who logs them. A summary for ARCHITECTURE.md; the meanings are in docs/metrics.md.
 */
export function metricGroupTableMarkdown(): string {
  const groups = new Map<string, MetricDecl[]>();
  for (const d of ALL) {
    const g = groupOf(d.key);
    groups.set(g, [...(groups.get(g) ?? []), d]);
  }
  const rows = [...groups].map(([g, ds]) => {
    const keys = ds.map((d) => `${code(d.key.slice(g.length + 1) || d.key)} ${d.unit}`).join(', ');
    const who = [...new Set(ds.map(runs))];
    return `| ${code(`${g}/`)} | ${cell(keys)} | ${cell(who.length === 1 ? who[0] : 'varies by key (docs/metrics.md)')} |`;
  });
  return ['| group | keys (unit) | logged by |', '|---|---|---|', ...rows].join('\n');
}

/** The keys with an anchor name: what `--metric-names trl|verl` renames. */
export function anchorTableMarkdown(): string {
  const rows = ALL.filter((d) => d.trl || d.verl).map((d) => `| ${code(d.key)} | ${code(d.trl)} | ${code(d.verl)} |`);
  return ['| ours | TRL (`--metric-names trl`) | veRL (`--metric-names verl`) |', '|---|---|---|', ...rows].join('\n');
}
