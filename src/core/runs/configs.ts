/**
 * Comparing run configs: flattened to dot paths, the fields that differ between runs, and which
 * runs are seeds of one experiment (Compare's bands and its statistics).
 */
import type { RunConfig } from '../presets/schema.ts';

/** A config flattened to dot paths (arrays are one leaf). */
export function flattenConfig(v: unknown, prefix = '', out: Map<string, unknown> = new Map()): Map<string, unknown> {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v)) flattenConfig(x, prefix ? `${prefix}.${k}` : k, out);
  } else out.set(prefix, v);
  return out;
}

/** JSON with sorted keys (equal configs give equal strings). */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'undefined';
}

/** The fields where the configs differ (a field one config lacks counts), sorted by path. */
export function configDiff(configs: readonly unknown[]): { path: string; values: unknown[] }[] {
  const flat = configs.map((c) => flattenConfig(c));
  const paths = new Set<string>();
  for (const f of flat) for (const k of f.keys()) paths.add(k);
  const rows: { path: string; values: unknown[] }[] = [];
  for (const p of [...paths].sort()) {
    const values = flat.map((f) => f.get(p));
    const first = stableJson(values[0]);
    if (values.some((x) => stableJson(x) !== first)) rows.push({ path: p, values });
  }
  return rows;
}

/** Fields that do not make two runs different experiments: runs equal except these are seeds of one config. */
export const SEED_GROUP_IGNORES = ['seed', 'iterations', 'title', 'description', 'stopAtSuccess'] as const;

/** Two runs with the same key are the same experiment on different seeds. */
export function seedGroupKey(config: RunConfig): string {
  const c: Record<string, unknown> = { ...config };
  for (const k of SEED_GROUP_IGNORES) delete c[k];
  return stableJson(c);
}
