/**
 * "Run N seeds": one draft trained on consecutive seeds, one run after another, each its own
 * record, tagged alike so Runs compares them as one group (mean ± band).
 */
import type { DraftConfig } from './fields.ts';

/** Most seeds one "Run N seeds" trains. */
export const MAX_SEEDS = 10;

export class SeedPlan {
  readonly seeds: number[];
  /** The tag that groups their records. */
  readonly tag: string;
  /** Which seed trains now (−1 before the first). */
  index = -1;
  /** The records made so far. */
  readonly ids: string[] = [];
  /** Resolves when the last seed finished or the plan was cancelled. */
  readonly ended: Promise<void>;
  private end: () => void = () => undefined;

  /** `n` is clamped to 2..MAX_SEEDS; the draft's seed comes first. */
  constructor(
    private readonly draft: DraftConfig,
    n: number,
  ) {
    const count = Math.max(2, Math.min(MAX_SEEDS, Math.floor(Number.isFinite(n) ? n : 2)));
    this.seeds = Array.from({ length: count }, (_, i) => (draft.seed + i) % 2 ** 31);
    this.tag = `seeds ${this.seeds[0]}–${this.seeds[count - 1]} · ${draft.id}`;
    this.ended = new Promise<void>((resolve) => (this.end = resolve));
  }

  /** The next seed's draft, or null once every seed has run. */
  next(): DraftConfig | null {
    this.index++;
    return this.index < this.seeds.length ? { ...structuredClone(this.draft), seed: this.seeds[this.index] } : null;
  }

  /** " (2 of 3)": the current seed's place, for its record's name. */
  get place(): string {
    return ` (${this.index + 1} of ${this.seeds.length})`;
  }

  finish(): void {
    this.end();
  }
}
