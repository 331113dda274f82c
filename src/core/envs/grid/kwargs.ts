/**
 * Reading env kwargs (plain JSON from a config file or a URL) with messages that say which
 * env, which key and what was wrong, instead of a NaN somewhere inside a rollout.
 */
import type { EnvKwargs } from '../registry.ts';
import { documentKwarg } from '../kwargDocs.ts';
import { DEFAULT_VIEW_SIZE, MAX_EPISODE_STEPS, MAX_VIEW_SIZE } from './world.ts';

export class KwargReader {
  private readonly used = new Set<string>();

  constructor(
    private readonly envId: string,
    private readonly kwargs: EnvKwargs,
  ) {}

  int(name: string, fallback: number, bounds: { min?: number; max?: number; odd?: boolean } = {}): number {
    this.used.add(name);
    const v = this.kwargs[name] ?? fallback;
    documentKwarg({ name, default: v, range: `${bounds.odd ? 'odd, ' : ''}${bounds.min ?? '…'}..${bounds.max ?? '…'}` });
    const where = `${this.envId}: kwarg ${name}`;
    if (typeof v !== 'number' || !Number.isInteger(v)) throw new TypeError(`${where} must be an integer, got ${JSON.stringify(v)}`);
    if (bounds.min !== undefined && v < bounds.min) throw new RangeError(`${where} = ${v} is below the minimum ${bounds.min}`);
    if (bounds.max !== undefined && v > bounds.max) throw new RangeError(`${where} = ${v} is above the maximum ${bounds.max}`);
    if (bounds.odd && v % 2 !== 1) throw new RangeError(`${where} = ${v} must be odd (the agent sits in the centre column)`);
    return v;
  }

  bool(name: string, fallback: boolean): boolean {
    this.used.add(name);
    const v = this.kwargs[name] ?? fallback;
    documentKwarg({ name, default: v, range: 'true/false' });
    if (typeof v !== 'boolean') throw new TypeError(`${this.envId}: kwarg ${name} must be true or false, got ${JSON.stringify(v)}`);
    return v;
  }

  /** `maxSteps`, the episode's step limit: at least `min` (1), at most MAX_EPISODE_STEPS. */
  maxSteps(fallback: number, min = 1): number {
    return this.int('maxSteps', fallback, { min, max: MAX_EPISODE_STEPS });
  }

  /** `viewSize`, the side of the agent's square egocentric view, cells (odd: the agent sits in the centre column). */
  viewSize(): number {
    return this.int('viewSize', DEFAULT_VIEW_SIZE, { min: 3, max: MAX_VIEW_SIZE, odd: true });
  }

  /**
   * Throws on kwargs nobody read (usually a typo), listing the known ones; else returns `config`.
   * Pass the config built from this reader's reads, so they all happen before the check.
   */
  done<T>(config: T): T {
    const unknown = Object.keys(this.kwargs).filter((k) => !this.used.has(k) && this.kwargs[k] !== undefined);
    if (unknown.length > 0) {
      throw new Error(`${this.envId}: unknown kwarg${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; known: ${[...this.used].join(', ')}`);
    }
    return config;
  }
}
