/**
 * Reading the registry: the declaration of a concrete key, which keys a run logs, and the
 * anchors' names for a metric row (`--metric-names trl|verl`) and back.
 */
import { METRICS, type EnvFamily, type MetricDecl, type MetricKey, type PolicyKind } from './registry.ts';

/** What decides which keys apply to a run. */
export interface MetricRun {
  family: EnvFamily;
  policy: PolicyKind;
}

/** The naming a metric row is written in: ours, TRL's or veRL's. */
export type MetricNaming = 'ours' | 'trl' | 'verl';
export const METRIC_NAMINGS: readonly MetricNaming[] = ['ours', 'trl', 'verl'];

/** A placeholder segment of a pattern key: `<term>`, `<name>`. */
const PLACEHOLDER = /<[a-z]+>/g;

const isPattern = (key: string) => key.includes('<');

/** `reward/<term>/mean` → /^reward\/([^/]+)\/mean$/: a placeholder stands for one non-empty segment. */
function patternRegex(key: string): RegExp {
  const parts = key.split(PLACEHOLDER).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('([^/]+)')}$`);
}

/** Fills a pattern's placeholders, in order, with `values`. */
function fill(pattern: string, values: readonly string[]): string {
  let i = 0;
  return pattern.replace(PLACEHOLDER, () => values[i++]);
}

/** The declarations as the wide interface (the `as const` tuple types each entry apart). */
const ALL: readonly MetricDecl[] = METRICS;

const LITERAL = new Map<string, MetricDecl>(ALL.filter((d) => !isPattern(d.key)).map((d) => [d.key, d]));
const PATTERNS: readonly { decl: MetricDecl; re: RegExp }[] = ALL.filter((d) => isPattern(d.key)).map((d) => ({ decl: d, re: patternRegex(d.key) }));

/** The declaration of a concrete key (a literal one before a pattern), or undefined when the key is undeclared. */
export function metricDecl(key: string): MetricDecl | undefined {
  const lit = LITERAL.get(key);
  if (lit) return lit;
  for (const p of PATTERNS) if (p.re.test(key)) return p.decl;
  return undefined;
}

/** Whether `key` is declared (a literal key, or a pattern's instance): what a chart may draw. */
export function isMetricKey(key: string): key is MetricKey {
  return metricDecl(key) !== undefined;
}

/** Whether a declared key belongs in a run of this family and policy. */
export function appliesTo(decl: MetricDecl, run: MetricRun): boolean {
  return decl.families.includes(run.family) && decl.policies.includes(run.policy);
}

/**
 * Drops, in place, the keys whose declaration excludes the run (a grid run's `tools/*`, which
 * would always read 0). Undeclared keys stay: the registry tests catch them, and a run never
 * loses a number silently.
 */
export function keepApplicable<M extends Record<string, number>>(metrics: M, run: MetricRun): M {
  for (const k of Object.keys(metrics)) {
    const d = metricDecl(k);
    if (d && !appliesTo(d, run)) delete metrics[k];
  }
  return metrics;
}

/** A key in `naming` (ours when the declaration gives that anchor no name). */
export function anchorName(key: string, naming: MetricNaming): string {
  if (naming === 'ours') return key;
  const lit = LITERAL.get(key);
  if (lit) return lit[naming] ?? key;
  for (const p of PATTERNS) {
    const m = p.re.exec(key);
    const to = p.decl[naming];
    if (m && to) return fill(to, m.slice(1));
    if (m) return key;
  }
  return key;
}

/** Every literal anchor name of `naming` → our key, and the pattern anchors as regexes. */
function reverseTable(naming: Exclude<MetricNaming, 'ours'>) {
  const lit = new Map<string, string>();
  const pat: { re: RegExp; ours: string }[] = [];
  for (const d of ALL) {
    const to = d[naming];
    if (!to) continue;
    if (isPattern(to)) pat.push({ re: patternRegex(to), ours: d.key });
    else lit.set(to, d.key);
  }
  return { lit, pat };
}
const REVERSE = { trl: reverseTable('trl'), verl: reverseTable('verl') };

/** Our key for a key written in `naming` (the key itself when it is no anchor name). */
export function fromAnchorName(key: string, naming: MetricNaming): string {
  if (naming === 'ours') return key;
  const t = REVERSE[naming];
  const lit = t.lit.get(key);
  if (lit) return lit;
  for (const p of t.pat) {
    const m = p.re.exec(key);
    if (m) return fill(p.ours, m.slice(1));
  }
  return key;
}

/** A metric row with its keys renamed into `naming`; other fields (iteration, wall_s) keep their names and order. */
export function renameRow<T extends Record<string, unknown>>(row: T, naming: MetricNaming): Record<string, unknown> {
  if (naming === 'ours') return row;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[anchorName(k, naming)] = v;
  return out;
}

/**
 * The naming a row was written in: 'trl' or 'verl' when one of its keys is that anchor's name
 * for one of our keys and not itself one of ours, else 'ours'.
 */
export function detectNaming(row: Readonly<Record<string, unknown>>): MetricNaming {
  for (const naming of ['trl', 'verl'] as const) {
    for (const k of Object.keys(row)) if (metricDecl(k) === undefined && fromAnchorName(k, naming) !== k) return naming;
  }
  return 'ours';
}

/** A row read back into our names (rows written with --metric-names trl|verl); rows in ours are returned as they are. */
export function rowToOurs<T extends Record<string, unknown>>(row: T): T {
  const naming = detectNaming(row);
  if (naming === 'ours') return row;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[fromAnchorName(k, naming)] = v;
  return out as T;
}
