/**
 * A token rollout worker (comlink): the continuous-batching generator of rollout/tokenContinuous.ts in its own
 * thread, decoding without pause while the learner trains in the caller's thread. The worker's
 * loop runs decoder calls in slices of a few milliseconds and yields between them, so weight
 * updates, new episodes and `next()` requests land between two decoder calls.
 */
import { transfer } from 'comlink';
import '../../core/envs/index.ts';
import { makeEnv } from '../../core/envs/index.ts';
import { ensureCodeEnvs } from '../codeEnv/index.ts';
import { RealClock } from '../../core/envs/clock.ts';
import type { ToolEnv } from '../../core/envs/types.ts';
import type { Weights } from '../../core/models/types.ts';
import type { TokenSourceInit } from '../../core/rollout/tokenSource.ts';
import type { Engine, TokenDecoder } from '../../core/engine/types.ts';
import type { TokenEpisode } from '../../core/rollout/tokenEpisode.ts';
import { TokenSlotGenerator, type SlotEpisodeSpec, type TokenSlotStats } from '../../core/rollout/tokenContinuous.ts';
import { dropGroups } from '../../core/rollout/tokenSource.ts';
import { makeTokenModel } from '../../core/models/transformer.ts';
import { Rng } from '../../core/util/rng.ts';
import { yieldToEvents } from '../pool/yield.ts';

/** Longest stretch of decoder calls between two looks at the message queue, ms. */
const SLICE_MS = 8;

/** A worker's generator and the loop that keeps it decoding while episodes are in flight. */
class SlotLoop {
  gen: TokenSlotGenerator | null = null;
  decoder: TokenDecoder | null = null;
  /** The generator's sampling stream (a checkpoint saves its state). */
  rng: Rng | null = null;
  private looping = false;
  private failure: Error | null = null;
  /** `next()` calls waiting for a finished episode. */
  readonly waiters: { resolve: (eps: TokenEpisode[]) => void; reject: (e: Error) => void }[] = [];

  need(): TokenSlotGenerator {
    if (this.failure) throw this.failure;
    if (!this.gen) throw new Error('token rollout worker: init() was not called (or the worker was closed)');
    return this.gen;
  }

  /** Hands finished episodes to a waiting `next()` (all of them to the first waiter). */
  flush(): void {
    const g = this.gen;
    if (!g || this.waiters.length === 0) return;
    if (g.completedCount > 0) this.waiters.shift()!.resolve(g.takeCompleted());
    else if (g.inFlight === 0) for (const w of this.waiters.splice(0)) w.resolve([]);
  }

  async loop(): Promise<void> {
    if (this.looping) return;
    this.looping = true;
    try {
      while (this.gen && this.gen.inFlight > 0) {
        const t0 = performance.now();
        await this.gen.run(() => performance.now() - t0 > SLICE_MS);
        this.flush();
        await yieldToEvents();
      }
    } catch (e) {
      this.failure = e instanceof Error ? e : new Error(String(e));
      for (const w of this.waiters.splice(0)) w.reject(this.failure);
    } finally {
      this.looping = false;
      this.flush();
    }
  }

  async init(o: TokenSourceInit, engine: Engine): Promise<void> {
    if (this.gen) throw new Error('token rollout worker: init() called twice');
    await ensureCodeEnvs(o.env.id);
    const decoder = (this.decoder = await engine.createDecoder(makeTokenModel(o.model), o.rows, o.weights, o.prefillStep));
    decoder.version = o.version;
    this.gen = new TokenSlotGenerator({
      decoder,
      makeEnv: () => makeEnv(o.env.id, o.env.kwargs) as ToolEnv,
      clock: new RealClock(),
      rng: (this.rng = new Rng(o.seed)),
      temperature: o.temperature,
      maxActionTokens: o.maxActionTokens,
      constrained: o.constrained,
    });
  }

  /** Finished episodes now (or none when nothing is in flight), else once one finishes. */
  next(): Promise<TokenEpisode[]> {
    const g = this.need();
    if (g.completedCount > 0 || g.inFlight === 0) {
      const eps = g.takeCompleted();
      return Promise.resolve(transfer(eps, episodeBuffers(eps)));
    }
    return new Promise<TokenEpisode[]>((resolve, reject) => {
      this.waiters.push({ resolve: (eps) => resolve(transfer(eps, episodeBuffers(eps))), reject });
      void this.loop();
    });
  }

  async close(): Promise<void> {
    const d = this.decoder;
    this.gen = null;
    this.decoder = null;
    this.rng = null;
    for (const w of this.waiters.splice(0)) w.reject(new Error('token rollout worker closed'));
    await d?.release();
  }
}

/** `loadEngine(name)`: the engine a worker decodes on; `name` is the caller's choice, where it has one. */
export function createTokenWorkerApi(loadEngine: (name?: string) => Promise<Engine>) {
  const w = new SlotLoop();
  return {
    async init(o: TokenSourceInit, engineName?: string): Promise<void> {
      if (w.gen) throw new Error('token rollout worker: init() called twice');
      await w.init(o, await loadEngine(engineName));
    },
    enqueue(specs: readonly SlotEpisodeSpec[]): void {
      const g = w.need();
      for (const s of specs) g.enqueue(s);
      void w.loop();
    },
    next: (): Promise<TokenEpisode[]> => w.next(),
    /** Lands between two decoder calls: later tokens carry the new version. */
    setWeights(weights: Weights, version: number): void {
      w.need();
      w.decoder!.setWeights(weights, version);
    },
    drop(groups: readonly number[], minVersion: number): number[] {
      const out = dropGroups(w.need(), groups, minVersion);
      w.flush();
      return out;
    },
    /** The watchdog pings while a call is in flight: answered between two decoder slices. */
    ping(): true {
      return true;
    },
    stats(): TokenSlotStats & { inFlight: number } {
      const g = w.need();
      return { ...g.stats, inFlight: g.inFlight };
    },
    samplingState(): [number, number, number, number] {
      w.need();
      return w.rng!.getState();
    },
    /** Lands between two decoder calls: later tokens draw from the restored stream. */
    setSamplingState(state: readonly number[]): void {
      w.need();
      w.rng!.setState(state);
    },
    close: (): Promise<void> => w.close(),
  };
}

export type TokenWorkerApi = ReturnType<typeof createTokenWorkerApi>;

/** The distinct buffers of episodes' arrays (moved, not copied, to the trainer). */
function episodeBuffers(eps: readonly TokenEpisode[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const e of eps) for (const a of [e.tokens, e.lossMask, e.logprobs, e.entropies, e.versions, e.rewards, e.allow]) if (a) out.add(a.buffer as ArrayBuffer);
  return [...out];
}
