/**
 * Where the continuous token trainer gets finished episodes from: a generator in the training
 * thread (`LocalTokenSource`) or one in a rollout worker (src/runtime/tokenWorker), which then
 * decodes while the learner trains.
 */
import type { Weights } from '../models/types.ts';
import type { InferenceEngine } from '../models/runners.ts';
import type { Clock } from '../envs/clock.ts';
import { makeEnv, type EnvKwargs } from '../envs/index.ts';
import type { ToolEnv } from '../envs/types.ts';
import { makeTokenModel, type TransformerModelConfig } from '../models/transformer.ts';
import { Rng } from '../util/rng.ts';
import type { TokenEpisode } from './tokenEpisode.ts';
import { TokenSlotGenerator, type SlotEpisodeSpec, type TokenSlotOptions, type TokenSlotStats } from './tokenContinuous.ts';

/** Every method is asynchronous so that both kinds of source fit. */
export interface TokenEpisodeSource {
  /** Starts episodes (in this order). */
  enqueue(specs: readonly SlotEpisodeSpec[]): Promise<void>;
  /**
   * Episodes finished since the last call, waiting until there is at least one; [] only when
   * nothing is in flight.
   */
  next(): Promise<TokenEpisode[]>;
  /** New weights for the episodes' next tokens (episodes in flight continue: partial rollouts). */
  setWeights(weights: Weights, version: number): Promise<void>;
  /**
   * Aborts the in-flight episodes of `groups`, and of every group with a token sampled before
   * `minVersion`; returns the group ids aborted.
   */
  drop(groups: readonly number[], minVersion: number): Promise<number[]>;
  /** Cumulative counters and the episodes in flight. */
  stats(): Promise<TokenSlotStats & { inFlight: number }>;
  /** The sampling stream's state (sfc32's four uint32 words), for a checkpoint. */
  samplingState(): Promise<[number, number, number, number]>;
  /** Continues the sampling stream from a `samplingState()` snapshot (a restored checkpoint's). */
  setSamplingState(state: readonly number[]): Promise<void>;
  release(): Promise<void>;
}

/** The generator in the calling thread: decoding happens inside `next()`. */
export class LocalTokenSource implements TokenEpisodeSource {
  private readonly gen: TokenSlotGenerator;

  constructor(private readonly o: TokenSlotOptions) {
    this.gen = new TokenSlotGenerator(o);
  }

  enqueue(specs: readonly SlotEpisodeSpec[]): Promise<void> {
    for (const s of specs) this.gen.enqueue(s);
    return Promise.resolve();
  }

  async next(): Promise<TokenEpisode[]> {
    await this.gen.run(() => this.gen.completedCount > 0);
    return this.gen.takeCompleted();
  }

  setWeights(weights: Weights, version: number): Promise<void> {
    this.o.decoder.setWeights(weights, version);
    return Promise.resolve();
  }

  drop(groups: readonly number[], minVersion: number): Promise<number[]> {
    return Promise.resolve(dropGroups(this.gen, groups, minVersion));
  }

  stats(): Promise<TokenSlotStats & { inFlight: number }> {
    return Promise.resolve({ ...this.gen.stats, inFlight: this.gen.inFlight });
  }

  samplingState(): Promise<[number, number, number, number]> {
    return Promise.resolve(this.o.rng.getState());
  }

  setSamplingState(state: readonly number[]): Promise<void> {
    this.o.rng.setState(state);
    return Promise.resolve();
  }

  release(): Promise<void> {
    return this.o.decoder.release();
  }
}

/** `drop` on a generator: the listed groups plus those holding a token older than minVersion. */
export function dropGroups(gen: TokenSlotGenerator, groups: readonly number[], minVersion: number): number[] {
  const doomed = new Set([...groups, ...gen.groupsSampledBefore(minVersion)]);
  gen.abort((spec) => doomed.has(spec.group));
  return [...doomed];
}

/** What a rollout worker needs to build the same generator as the training thread would. */
export interface TokenSourceInit {
  model: TransformerModelConfig;
  env: { id: string; kwargs?: EnvKwargs };
  weights: Weights;
  version: number;
  /** Decoder rows (the KV budget). */
  rows: number;
  prefillStep: number;
  temperature: number;
  maxActionTokens: number;
  /** Constrained decoding (TokenSlotOptions.constrained); absent = false. */
  constrained?: boolean;
  /** Seed of the sampling stream. */
  seed: number;
}

/** Builds the episode source in a rollout worker (platform-specific; see src/runtime/tokenWorker). */
export type TokenSourceFactory = (init: TokenSourceInit) => Promise<TokenEpisodeSource>;

/** The generator in the training thread, on a decoder of `init.rows` rows. */
export async function localTokenSource(engine: Pick<InferenceEngine, 'createDecoder'>, init: TokenSourceInit, clock: Clock): Promise<TokenEpisodeSource> {
  const decoder = await engine.createDecoder(makeTokenModel(init.model), init.rows, init.weights, init.prefillStep);
  decoder.version = init.version;
  return new LocalTokenSource({
    decoder,
    makeEnv: () => makeEnv(init.env.id, init.env.kwargs) as ToolEnv,
    clock,
    rng: new Rng(init.seed),
    temperature: init.temperature,
    maxActionTokens: init.maxActionTokens,
    constrained: init.constrained,
  });
}
