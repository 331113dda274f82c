/**
 * Continuous-batching token generation for multi-turn text envs whose tool calls take time: the
 * rollout side of the asynchronous token trainer. Episodes start and finish at their own pace; a
 * tool call parks its episode for `info.latencyMs` of clock time while the other rows keep
 * decoding. ARCHITECTURE.md explains the KV-cache budget (eviction of parked rows), how tokens
 * are tagged with versions across weight updates, and virtual vs real time.
 */
import type { Clock } from '../envs/clock.ts';
import type { StepResult, ToolEnv, ToolObs } from '../envs/types.ts';
import { PAD } from '../text/codec.ts';
import { sampleRow } from './categorical.ts';
import type { Rng } from '../util/rng.ts';
import type { TokenDecoder } from '../models/runners.ts';
import { appendSample, applyReply, finishEpisode, nextTokenMask, startEpisode, takeActionToken, truncateToContext, type EpisodeRecord, type TokenEpisode } from './tokenEpisode.ts';

/** What identifies an episode to the trainer. */
export interface SlotEpisodeSpec {
  /** Reset seed. */
  seed: number;
  /** Group id (the trainer's; −1 when not grouped). */
  group: number;
}

export interface TokenSlotOptions {
  decoder: TokenDecoder;
  /** Makes one env instance (instances are reused across episodes). */
  makeEnv: () => ToolEnv;
  /** Where tool latency is waited for. */
  clock: Clock;
  /** Sampling randomness (envs are seeded through reset). */
  rng: Rng;
  /** 1 = sample from π; 0 = greedy. */
  temperature: number;
  /** Most tokens in one action, <eoa> included; reaching it ends the action (forced end). */
  maxActionTokens: number;
  /** Use a prefill-chunk call when some row has at least this many tokens to feed. Default 4. */
  minChunk?: number;
  /** Constrained decoding: sample from the distribution masked to the env's action grammar, and record the masks. Default false. */
  constrained?: boolean;
}

/** Cumulative counters (the trainer reports per-iteration differences). */
export interface TokenSlotStats {
  decoderCalls: number;
  envSteps: number;
  policyTokens: number;
  /** Tokens fed to the decoder, re-prefills included. */
  fedTokens: number;
  /** Σ over turns of the context already in the cache when the turn's first token was sampled. */
  cachedTokens: number;
  /** Σ over turns of the context length at the turn's first sampled token. */
  contextTokens: number;
  /** Rows taken from parked episodes (each costs a re-prefill of that episode's context). */
  evictions: number;
  /** Prompt tokens whose keys/values were copied from another row holding the same prompt instead of fed. */
  copiedTokens: number;
  /** Episodes finished. */
  completed: number;
  /** Episodes dropped by `abort`. */
  aborted: number;
  /** Milliseconds (clock time) in which no row could decode because every episode waited on a tool. */
  toolWaitMs: number;
}

interface Live extends EpisodeRecord {
  spec: SlotEpisodeSpec;
  env: ToolEnv;
  /** Decoder row holding this episode's cache, or −1. */
  row: number;
  /** Context tokens in the row's cache (positions 0..fed−1); 0 without a row. */
  fed: number;
  /** Tokens fed since this turn's context was complete-to-feed (for the hit rate). */
  fedThisTurn: number;
  /** The current turn's first token has been sampled (its hit-rate share is counted). */
  turnCounted: boolean;
  /** Ids of the action being generated. */
  action: number[];
  /** Waiting for a tool reply due at `due` (clock ms). */
  parked: boolean;
  due: number;
  reply: StepResult<ToolObs> | null;
  /** Admission order (FIFO row assignment). */
  order: number;
  /** Version of the first sampled token (versions only grow), Infinity before it. */
  minVersion: number;
  /** Oldest weights version that computed any key/value in the row's cache (Infinity when empty). */
  cacheVersion: number;
  /** The first observation's context tokens, joined: episodes with equal keys share a prompt. */
  prompt: string;
  /** A hash of it (FNV-1a over the ids), compared first: row assignment checks it per row per call. */
  promptHash: number;
  /** Its length in tokens. */
  promptLen: number;
}

export class TokenSlotGenerator {
  readonly stats: TokenSlotStats = {
    decoderCalls: 0,
    envSteps: 0,
    policyTokens: 0,
    fedTokens: 0,
    cachedTokens: 0,
    contextTokens: 0,
    evictions: 0,
    copiedTokens: 0,
    completed: 0,
    aborted: 0,
    toolWaitMs: 0,
  };
  private readonly live: Live[] = [];
  private readonly rowOwner: (Live | null)[];
  private readonly freeEnvs: ToolEnv[] = [];
  private completed: TokenEpisode[] = [];
  private admitted = 0;
  private readonly feed1: Int32Array;
  private readonly feedS: Int32Array;
  private readonly pos: Int32Array;
  private readonly take: Int32Array;
  private readonly scratch: Float64Array;
  /** Exponential average of one decoder call's duration on the clock by call size, ms (0 on a VirtualClock). */
  private readonly callMs = new Map<number, number>();
  private readonly calledWith = new Set<number>();

  constructor(private readonly o: TokenSlotOptions) {
    const { decoder } = o;
    if (decoder.steps[0] !== 1) throw new RangeError(`TokenSlotGenerator: the decoder must support one-token calls (has ${decoder.steps.join(', ')})`);
    const B = decoder.batch;
    const S = Math.max(...decoder.steps);
    this.rowOwner = Array<Live | null>(B).fill(null);
    this.feed1 = new Int32Array(B);
    this.feedS = new Int32Array(B * S);
    this.pos = new Int32Array(B);
    this.take = new Int32Array(B);
    this.scratch = new Float64Array(decoder.vocab);
    decoder.reset();
  }

  /** Episodes started and not yet finished or aborted. */
  get inFlight(): number {
    return this.live.length;
  }

  /** Finished episodes waiting to be taken. */
  get completedCount(): number {
    return this.completed.length;
  }

  /** Starts an episode (env reset now; decoding once it holds a row). */
  enqueue(spec: SlotEpisodeSpec): void {
    const env = this.freeEnvs.pop() ?? this.o.makeEnv();
    const start = startEpisode(env.reset({ seed: spec.seed }).obs.text);
    const l: Live = {
      ...start,
      prompt: start.ctx.join(','),
      promptHash: hashIds(start.ctx),
      promptLen: start.ctx.length,
      spec,
      env,
      row: -1,
      fed: 0,
      fedThisTurn: 0,
      turnCounted: false,
      action: [],
      parked: false,
      due: 0,
      reply: null,
      order: this.admitted++,
      minVersion: Infinity,
      cacheVersion: Infinity,
    };
    this.live.push(l);
    if (l.ctx.length >= this.o.decoder.context) this.endByContext(l);
  }

  /** Finished episodes in completion order (and forgets them). */
  takeCompleted(): TokenEpisode[] {
    const out = this.completed;
    this.completed = [];
    return out;
  }

  /**
   * Groups with an episode in flight that sampled a token before `version`, or whose cache holds
   * keys/values from before it (its next tokens would count as that old).
   */
  groupsSampledBefore(version: number): number[] {
    const out = new Set<number>();
    for (const l of this.live) if (Math.min(l.minVersion, l.cacheVersion) < version) out.add(l.spec.group);
    return [...out];
  }

  /** Drops in-flight episodes (e.g. too stale to be trained); returns how many. */
  abort(pred: (spec: SlotEpisodeSpec) => boolean): number {
    let n = 0;
    for (let i = this.live.length - 1; i >= 0; i--) {
      const l = this.live[i];
      if (!pred(l.spec)) continue;
      this.release(l);
      this.live.splice(i, 1);
      n++;
    }
    this.stats.aborted += n;
    return n;
  }

  /**
   * Decodes and delivers tool replies until `until()` holds (checked after every completed
   * episode and every wait) or nothing is in flight.
   */
  async run(until: () => boolean): Promise<void> {
    const { decoder } = this.o;
    while (!until() && this.live.length > 0) {
      this.deliverDue();
      if (until()) return;
      this.assignRows();
      const decoding = this.rowOwner.filter((l): l is Live => l !== null && !l.parked);
      if (decoding.length === 0) {
        await this.waitForReply();
        continue;
      }
      const step = this.callSize();
      const feed = this.fillFeed(step);
      const tc = this.o.clock.now();
      const out = await decoder.next(feed, this.pos, step);
      this.timeCall(step, this.o.clock.now() - tc);
      this.stats.decoderCalls++;
      for (const l of decoding) this.afterCall(l, out.logprobs, step);
    }
  }

  /** Everyone waits on a tool: jump to the next reply (virtual time) or sleep until it. */
  private async waitForReply(): Promise<void> {
    const { clock } = this.o;
    let next = Infinity;
    for (const l of this.live) if (l.parked) next = Math.min(next, l.due);
    if (next === Infinity) throw new Error('TokenSlotGenerator: episodes in flight but none can decode or is waiting');
    const t0 = clock.now();
    await waitUntil(clock, next);
    this.stats.toolWaitMs += clock.now() - t0;
  }

  /**
   * Tokens per row in the next call: a prefill chunk (S) when some decoding row has several tokens
   * to feed and every row holding a cache can take a chunk at its position without passing the
   * context; once both call sizes are timed, only when the chunk feeds more tokens per
   * millisecond (a chunk costs several one-token calls, and most rows in it may be sampling one
   * token each). Otherwise 1.
   */
  private callSize(): number {
    const { decoder } = this.o;
    const Tmax = decoder.context;
    const S = Math.max(...decoder.steps);
    const minChunk = this.o.minChunk ?? 4;
    let maxPending = 0;
    let fits = true;
    let fed1 = 0;
    let fedS = 0;
    for (const l of this.rowOwner) {
      if (l === null) continue;
      if (!l.parked) {
        const pending = l.ctx.length - l.fed;
        maxPending = Math.max(maxPending, pending);
        fed1 += Math.min(1, pending);
        fedS += Math.min(S, pending);
      }
      if (l.fed + S > Tmax) fits = false;
    }
    const ms1 = this.callMs.get(1) ?? 0;
    const msS = this.callMs.get(S) ?? 0;
    const chunkPays = ms1 > 0 && msS > 0 ? fedS / msS > fed1 / ms1 : maxPending >= minChunk;
    return S > 1 && fits && maxPending >= minChunk && chunkPays ? S : 1;
  }

  /** Fills the feed [rows·step] and positions for one call; `take` gets each row's real tokens. */
  private fillFeed(step: number): Int32Array {
    const feed = step === 1 ? this.feed1 : this.feedS;
    feed.fill(PAD);
    for (let r = 0; r < this.o.decoder.batch; r++) {
      const l = this.rowOwner[r];
      this.take[r] = 0;
      if (l === null) {
        this.pos[r] = 0;
        continue;
      }
      // Parked rows ride along at their next position (slots they overwrite when they resume;
      // callSize's `fits` guarantees fed + step ≤ Tmax for chunks, and fed < Tmax always holds).
      this.pos[r] = l.fed;
      if (l.parked) continue;
      this.take[r] = Math.min(step, l.ctx.length - l.fed);
      for (let k = 0; k < this.take[r]; k++) feed[r * step + k] = l.ctx[l.fed + k];
    }
    return feed;
  }

  /** Running average of a call size's duration; a size's first call is not timed (it pays one-off costs: buffers, kernels' first use). */
  private timeCall(step: number, ms: number): void {
    const avg = this.callMs.get(step);
    if (this.calledWith.has(step)) this.callMs.set(step, avg === undefined ? ms : 0.9 * avg + 0.1 * ms);
    this.calledWith.add(step);
  }

  /** After a decoder call: a row whose context is now fed samples its next token; an ended action goes to the env. */
  private afterCall(l: Live, logprobs: Float32Array, step: number): void {
    const { decoder, clock } = this.o;
    const r = l.row;
    const took = this.take[r];
    l.fed += took;
    l.fedThisTurn += took;
    if (took > 0) l.cacheVersion = Math.min(l.cacheVersion, decoder.version);
    this.stats.fedTokens += took;
    if (l.fed < l.ctx.length) return;
    if (!l.turnCounted) {
      // First sampled token of a turn: whatever of its context was not fed this turn came from the cache.
      l.turnCounted = true;
      this.stats.contextTokens += l.ctx.length;
      this.stats.cachedTokens += l.ctx.length - l.fedThisTurn;
    }
    const allowed = this.o.constrained ? nextTokenMask(l, l.env, decoder.vocab, this.o.maxActionTokens) : null;
    const s = sampleRow(logprobs, r * step + took - 1, decoder.vocab, this.o.rng, this.scratch, this.o.temperature, allowed ?? undefined);
    // The token's distribution depends on every cached key/value: after a weight update in
    // mid-episode (partial rollout) those may come from older weights, so the token counts as
    // sampled by the oldest of them (staleness and the off-policy correction see it).
    const v = Math.min(decoder.version, l.cacheVersion);
    appendSample(l, s, v, 0, allowed);
    if (l.minVersion === Infinity) l.minVersion = v;
    this.stats.policyTokens++;
    const text = takeActionToken(l, s.action, this.o.maxActionTokens);
    if (text === null) {
      if (l.ctx.length >= decoder.context) this.endByContext(l);
      return;
    }
    // The env replies at once (its randomness is seeded, so the reply does not depend on timing);
    // the reply is delivered after its latency on the clock, the episode parked meanwhile.
    const res = l.env.step(text);
    this.stats.envSteps++;
    l.actions.push(text);
    const latency = res.info.latencyMs ?? 0;
    if (latency > 0) {
      l.parked = true;
      l.due = clock.now() + latency;
      l.reply = res;
    } else {
      this.applyReply(l, res);
    }
  }

  /** Delivers every reply due by now. */
  private deliverDue(): void {
    const now = this.o.clock.now();
    for (const l of [...this.live]) {
      if (!l.parked || l.due > now) continue;
      const res = l.reply!;
      l.parked = false;
      l.reply = null;
      this.applyReply(l, res);
    }
  }

  private applyReply(l: Live, res: StepResult<ToolObs>): void {
    const next = applyReply(l, res, this.o.decoder.context);
    if (next === 'ended') {
      this.finish(l);
      return;
    }
    l.fedThisTurn = 0;
    l.turnCounted = false;
    if (next === 'contextFull') this.endByContext(l);
  }

  /**
   * Gives rows to ready episodes in admission order: a free row, else the row of the parked
   * episode whose reply is due last, if its wait outlasts the cost of re-prefilling it (its cache
   * is forgotten; it re-prefills when it resumes). Otherwise the ready episodes queue.
   *
   * Shared prompts (the episodes of a GRPO group start from the same observation): when another
   * row's cache already holds this episode's prompt, its keys/values are copied over (all but the
   * prompt's last token, which the episode feeds itself to get the logits it samples from). While
   * such a row is still prefilling the prompt, the episode waits for it rather than prefilling
   * the same tokens beside it.
   */
  private assignRows(): void {
    const waiting = this.live.filter((l) => l.row < 0 && !l.parked).sort((a, b) => a.order - b.order);
    if (waiting.length === 0) return;
    const now = this.o.clock.now();
    const S = Math.max(...this.o.decoder.steps);
    const copy = this.o.decoder.copyPrefix;
    for (const l of waiting) {
      let donor: Live | null = null;
      if (copy && l.promptLen > 1) {
        let leader = false;
        for (const o of this.rowOwner) {
          if (o === null || o.promptHash !== l.promptHash || o.prompt !== l.prompt) continue;
          if (o.fed >= l.promptLen - 1) donor = o;
          else leader = true;
        }
        if (donor === null && leader) continue; // a row is prefilling this prompt: copy it when done
      }
      const donorRow = donor?.row ?? -1;
      const donorVersion = donor?.cacheVersion ?? Infinity;
      let r = this.rowOwner.indexOf(null);
      if (r < 0) {
        let victim: Live | null = null;
        for (const o of this.rowOwner) if (o !== null && o.parked && (victim === null || o.due > victim.due)) victim = o;
        const refillMs = 2 * Math.ceil((victim?.fed ?? 0) / S) * (this.callMs.get(S) ?? this.callMs.get(1) ?? 0);
        if (victim === null || victim.due - now <= refillMs) return; // wait for a row to free up
        r = victim.row;
        victim.row = -1;
        victim.fed = 0;
        victim.cacheVersion = Infinity;
        this.stats.evictions++;
      }
      this.rowOwner[r] = l;
      l.row = r;
      l.fed = 0;
      l.cacheVersion = Infinity;
      // The donor may be the evicted victim: its slots are still in row r (copying onto itself).
      if (donor !== null && copy) {
        const n = l.promptLen - 1;
        copy(donorRow, r, n);
        l.fed = n;
        l.cacheVersion = donorVersion;
        this.stats.copiedTokens += n;
      }
    }
  }

  private finish(l: Live): void {
    const i = this.live.indexOf(l);
    if (i >= 0) this.live.splice(i, 1);
    this.completed.push(finishEpisode(l, l.env, l.spec.seed, l.spec.group));
    this.stats.completed++;
    this.release(l);
  }

  private release(l: Live): void {
    if (l.row >= 0) this.rowOwner[l.row] = null;
    l.row = -1;
    this.freeEnvs.push(l.env);
  }

  /** The context is full: truncated (see truncateToContext), and the episode finishes. */
  private endByContext(l: Live): void {
    truncateToContext(l, this.o.decoder.context);
    this.finish(l);
  }
}

/** 32-bit FNV-1a over token ids. */
function hashIds(ids: readonly number[]): number {
  let h = 0x811c9dc5;
  for (const id of ids) h = Math.imul(h ^ id, 0x01000193);
  return h >>> 0;
}

/** Waits until clock time `t`: a VirtualClock jumps there; a real clock sleeps. */
async function waitUntil(clock: Clock, t: number): Promise<void> {
  const ms = Math.max(0, t - clock.now());
  const v = clock as Clock & { advance?: (ms: number) => Promise<void> };
  if (typeof v.advance === 'function') await v.advance(ms);
  else await clock.sleep(ms);
}
