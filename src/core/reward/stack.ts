/**
 * Stacking each reward term's contribution per iteration (the reward lab's stacked chart), pure.
 *
 * Positive contributions stack upward from 0 and negative ones downward from 0, each in the
 * order the terms are given, so a term's band is [lo, hi] with hi − lo = |value| and the top of
 * the positive stack plus the bottom of the negative one is the sum of the terms (the shaped
 * reward, reward/mean, when every term is included). A missing or non-finite value adds nothing.
 */

/** Per-iteration metrics: `reward/<term>/mean` keys among others. */
export type TermRow = Readonly<Record<string, number>>;

/** Aggregate keys under reward/: not terms. */
const NOT_TERMS = new Set(['mean', 'std', 'min', 'max', 'lo', 'hi']);

/**
 * The terms with a `reward/<term>/mean` value other than 0 in some row, in first-seen order
 * (the task's own reward, 'outcome', first when present: it is the band the others shape).
 */
export function termsOf(rows: readonly TermRow[]): string[] {
  const seen = new Set<string>();
  for (const r of rows) {
    for (const [k, v] of Object.entries(r)) {
      if (!k.startsWith('reward/') || !k.endsWith('/mean')) continue;
      const t = k.slice('reward/'.length, -'/mean'.length);
      if (t === '' || NOT_TERMS.has(t) || seen.has(t)) continue;
      if (Number.isFinite(v) && v !== 0) seen.add(t);
    }
  }
  const out = [...seen];
  return out.includes('outcome') ? ['outcome', ...out.filter((t) => t !== 'outcome')] : out;
}

export interface StackBand {
  term: string;
  /** Per row: the band's bottom and top, reward units. */
  lo: number[];
  hi: number[];
}

/** Bands for `terms` over `rows`, plus the sum of the terms per row and the stack's y extent. */
export function stackTerms(rows: readonly TermRow[], terms: readonly string[]): { bands: StackBand[]; total: number[]; min: number; max: number } {
  const bands: StackBand[] = terms.map((term) => ({ term, lo: new Array<number>(rows.length), hi: new Array<number>(rows.length) }));
  const total = new Array<number>(rows.length);
  let min = 0;
  let max = 0;
  rows.forEach((r, i) => {
    let pos = 0;
    let neg = 0;
    terms.forEach((t, j) => {
      const raw = r[`reward/${t}/mean`];
      const v = Number.isFinite(raw) ? raw : 0;
      if (v >= 0) {
        bands[j].lo[i] = pos;
        bands[j].hi[i] = pos += v;
      } else {
        bands[j].hi[i] = neg;
        bands[j].lo[i] = neg += v;
      }
    });
    total[i] = pos + neg;
    if (pos > max) max = pos;
    if (neg < min) min = neg;
  });
  return { bands, total, min, max };
}
