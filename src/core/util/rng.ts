/**
 * Seeded pseudo-random numbers. Every source of randomness in an environment or a rollout
 * comes from one of these, so the same seed always replays the same episode.
 *
 * Algorithm: SplitMix32 to expand the seed, then sfc32 (fast, 128-bit state, passes
 * PractRand to 2^40+). Not cryptographic.
 */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  /** Uniform integer in [0, 2^32). */
  nextUint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform float in [0, 1). */
  random(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [lo, hi) (hi exclusive). */
  int(lo: number, hi: number): number {
    if (!(hi > lo)) throw new RangeError(`Rng.int: empty range [${lo}, ${hi})`);
    return lo + Math.floor(this.random() * (hi - lo));
  }

  /** One element of a non-empty array, uniformly. */
  choice<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Rng.choice: empty array');
    return items[this.int(0, items.length)];
  }

  /** Fisher–Yates shuffle, in place; returns the same array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(0, i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }

  /** True with probability p. */
  bernoulli(p: number): boolean {
    return this.random() < p;
  }

  /** Standard normal sample (Box–Muller). */
  normal(): number {
    let u = 0;
    while (u === 0) u = this.random();
    const v = this.random();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Log-normal sample with the given median and log-space sigma. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** The generator's whole state (four uint32 words): a checkpoint saves it, `setState` resumes the stream. */
  getState(): [number, number, number, number] {
    return [this.a >>> 0, this.b >>> 0, this.c >>> 0, this.d >>> 0];
  }

  /** Continues from a `getState()` snapshot: the next draws are the ones the snapshot's generator would make. */
  setState(state: readonly number[]): void {
    if (state.length !== 4 || !state.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffffffff)) {
      throw new RangeError(`Rng.setState: expected four uint32 words, got [${state.join(', ')}]`);
    }
    [this.a, this.b, this.c, this.d] = state as [number, number, number, number];
  }

  /** A fresh generator derived from this one (for independent sub-streams). */
  fork(): Rng {
    return new Rng(this.nextUint32());
  }
}

/** Hash of small integers into a 31-bit seed (distinct iterations/groups get unrelated seeds). */
export function mixSeed(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x01000193);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 12;
  }
  return (h >>> 0) & 0x7fffffff;
}

/**
 * Held-out evaluation seeds: 2,000,000,000 + i. Training seeds are 31-bit hashes of (seed,
 * iteration, group) and imitation seeds come from their own hashed stream, so these are unseen
 * by convention (a collision would need a hash to land in this narrow range), and every run,
 * the CLI's --eval and the learn bench alike, scores the same tasks.
 */
export function heldOutSeeds(n: number): number[] {
  return Array.from({ length: n }, (_, i) => 2_000_000_000 + i);
}
