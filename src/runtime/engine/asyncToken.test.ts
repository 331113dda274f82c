/**
 * Continuous-batching token rollouts with tool latency, and the asynchronous token trainer, on a
 * real decoder (ort-web WASM in Node) and a VirtualClock (reproducible; no real waiting).
 */
import { describe, expect, it } from 'vitest';
import { defaultsFor } from '../../core/algos/config.ts';
import { VirtualClock } from '../../core/envs/clock.ts';
import { registerEnv } from '../../core/envs/registry.ts';
import { dict, text } from '../../core/envs/spaces.ts';
import type { EnvSpec, ResetResult, StepResult, ToolEnv, ToolObs, TranscriptFrame } from '../../core/envs/types.ts';
import { TransformerPolicy } from '../../core/models/transformer.ts';
import { initWeights, type Weights } from '../../core/models/types.ts';
import { EOA, VOCAB_SIZE, encode } from '../../core/text/codec.ts';
import { createContinuousTrainer } from '../../core/trainer/continuousCollector.ts';
import type { TokenSourceFactory } from '../../core/rollout/tokenSource.ts';
import type { TokenEpisode } from '../../core/rollout/tokenEpisode.ts';
import { DEFAULT_TOKEN_TRAINER } from '../../core/trainer/tokenConfig.ts';
import { makeTokenModel } from '../../core/models/transformer.ts';
import { shiftedBatch } from '../../core/update/batch.ts';
import { TokenSlotGenerator } from '../../core/rollout/tokenContinuous.ts';
import { LocalTokenSource } from '../../core/rollout/tokenSource.ts';
import { sequenceLogprobs } from '../../core/update/sequenceScorer.ts';
import { Rng } from '../../core/util/rng.ts';
import { loadNodeEngine } from './node.ts';
import { nodeTokenWorker } from '../tokenWorker/node.ts';

/**
 * Two turns behind a slow service: any first action is "sent" and takes a seeded log-normal time
 * (median 20 ms, σ 1.7, as flaky-api); the second action earns 1 when it starts with a digit.
 */
class SlowDigitEnv implements ToolEnv {
  readonly spec: EnvSpec = {
    id: 'test/slow-digit',
    title: 'Slow digit',
    description: 'Send anything, wait for the reply, then answer with a digit.',
    family: 'tool',
    observationSpace: dict({ text: text(40) }),
    actionSpace: text(40),
    rewardRange: [0, 1],
    maxSteps: 2,
  };
  private rng = new Rng(0);
  private turn = 0;
  /** Latency of the first call in the current episode, ms. */
  latency = 0;
  reset(opts: { seed?: number } = {}): ResetResult<ToolObs> {
    this.rng = new Rng(opts.seed ?? 0);
    this.turn = 0;
    this.latency = this.rng.logNormal(Math.log(20), 1.7);
    return { obs: { text: 'send' }, info: {} };
  }
  step(action: string): StepResult<ToolObs> {
    this.turn++;
    if (this.turn === 1) return { obs: { text: 'now a number' }, reward: 0, terminated: false, truncated: false, info: { latencyMs: this.latency, toolCall: 'send' } };
    const ok = /^[0-9]/.test(action);
    return { obs: { text: ok ? 'done: correct.' : 'done: wrong.' }, reward: ok ? 1 : 0, terminated: true, truncated: false, info: { success: ok } };
  }
  renderText(): string {
    return '';
  }
  frame(): TranscriptFrame {
    return { kind: 'transcript', messages: [] };
  }
  expertAction(): string {
    return '7';
  }
}
registerEnv('test/slow-digit', () => new SlowDigitEnv());

const CTX = 48;
const model = new TransformerPolicy({ vocabSize: VOCAB_SIZE, dModel: 16, nLayers: 2, nHeads: 2, dFF: 32, context: CTX });

/** Weights with sharp attention (numeric differences would show) and a likely <eoa>, so actions are short. */
function sharpWeights(seed: number): Weights {
  const w = initWeights(model, seed);
  for (const k of Object.keys(w)) if (!k.includes('ln')) w[k] = w[k].map((x) => x * 6);
  w['head.b'][EOA] = 2.5;
  for (const id of encode('0123456789')) w['head.b'][id] = 1;
  return w;
}

async function generate(rows: number, episodes: number, seed: number, opts: { sharePrompts?: boolean; temperature?: number } = {}) {
  const engine = await loadNodeEngine('ort-web-wasm');
  const weights = sharpWeights(3);
  const decoder = await engine.createDecoder(model, rows, weights, 8);
  expect(decoder.copyPrefix).toBeTypeOf('function');
  if (opts.sharePrompts === false) (decoder as { copyPrefix?: unknown }).copyPrefix = undefined;
  const clock = new VirtualClock();
  const envs: SlowDigitEnv[] = [];
  const gen = new TokenSlotGenerator({
    decoder,
    makeEnv: () => {
      const e = new SlowDigitEnv();
      envs.push(e);
      return e;
    },
    clock,
    rng: new Rng(seed),
    temperature: opts.temperature ?? 1,
    maxActionTokens: 6,
  });
  const latencies: number[] = [];
  for (let i = 0; i < episodes; i++) {
    gen.enqueue({ seed: 100 + i, group: i });
    latencies.push(new Rng(100 + i).logNormal(Math.log(20), 1.7));
  }
  await gen.run(() => false);
  const eps = gen.takeCompleted();
  const runner = await engine.createPolicy(model, 8, weights);
  await decoder.release();
  return { eps, stats: gen.stats, clock, latencies, runner };
}

describe('continuous token rollouts with tool latency (ort-web WASM, virtual clock)', () => {
  it('parked and evicted episodes keep exact log-probs; no episode waits for another', { timeout: 60_000 }, async () => {
    // 12 episodes on 4 rows: parked episodes lose their rows and re-prefill.
    const tight = await generate(4, 12, 9);
    expect(tight.eps).toHaveLength(12);
    expect(tight.stats.evictions).toBeGreaterThan(0);
    // Every recorded behaviour log-prob equals a full forward pass of the same weights over the
    // recorded ids: riding along at a parked row's next position, evicting and re-prefilling
    // never corrupt a cache.
    const n = tight.eps.length;
    const rows = shiftedBatch(tight.eps, CTX);
    const full = await sequenceLogprobs(tight.runner, rows.tokens, rows.actions, n, CTX, VOCAB_SIZE);
    let worst = 0, checked = 0;
    for (let i = 0; i < n * CTX; i++) {
      if (!rows.mask[i]) continue;
      worst = Math.max(worst, Math.abs(full[i] - rows.oldLogprobs[i]));
      checked++;
    }
    expect(checked).toBeGreaterThan(24);
    expect(worst).toBeLessThanOrEqual(1e-4);
    await tight.runner.release();

    // One row per episode: nothing is evicted, and compute takes no virtual time, so the run
    // ends when the slowest episode's own call returns (not after the sum of per-turn maxima).
    const roomy = await generate(12, 12, 9);
    expect(roomy.stats.evictions).toBe(0);
    expect(roomy.clock.now()).toBeCloseTo(Math.max(...roomy.latencies), 6);
    // Completion order follows each episode's own latency.
    const order = roomy.eps.map((e) => e.seed - 100);
    const byLatency = [...order].sort((a, b) => roomy.latencies[a] - roomy.latencies[b]);
    expect(order).toEqual(byLatency);
    // Hit rate: the second turn's prefix comes from the cache; with evictions less of it does.
    const hit = (s: typeof roomy.stats) => s.cachedTokens / s.contextTokens;
    expect(hit(roomy.stats)).toBeGreaterThan(0.3);
    expect(hit(tight.stats)).toBeLessThan(hit(roomy.stats));
    expect(tight.stats.fedTokens).toBeGreaterThan(roomy.stats.fedTokens);
    await roomy.runner.release();
  });

  it('episodes that share a prompt prefill it once: copied keys/values give the same episodes', { timeout: 60_000 }, async () => {
    // Every SlowDigitEnv episode starts from the same observation. Greedy decoding makes the
    // episodes independent of the order rows sample in, so copying may change only the work.
    const shared = await generate(6, 12, 4, { temperature: 0 });
    const alone = await generate(6, 12, 4, { temperature: 0, sharePrompts: false });
    const prompt = shared.eps[0].tokens.findIndex((_, i) => shared.eps[0].lossMask[i] === 1);
    expect(prompt).toBeGreaterThan(2);
    // Each episode after the first to hold a row copies all but the prompt's last token.
    expect(shared.stats.copiedTokens).toBeGreaterThanOrEqual(5 * (prompt - 1));
    expect(shared.stats.copiedTokens % (prompt - 1)).toBe(0);
    expect(alone.stats.copiedTokens).toBe(0);
    expect(shared.stats.fedTokens + shared.stats.copiedTokens).toBeGreaterThanOrEqual(alone.stats.fedTokens);
    expect(shared.stats.fedTokens).toBeLessThan(alone.stats.fedTokens);
    const bySeed = (eps: TokenEpisode[]) => [...eps].sort((a, b) => a.seed - b.seed);
    const [a, b] = [bySeed(shared.eps), bySeed(alone.eps)];
    expect(a.map((e) => Array.from(e.tokens))).toEqual(b.map((e) => Array.from(e.tokens)));
    for (let i = 0; i < a.length; i++) for (let t = 0; t < a[i].logprobs.length; t++) expect(Math.abs(a[i].logprobs[t] - b[i].logprobs[t])).toBeLessThanOrEqual(1e-5);
    await Promise.all([shared.runner.release(), alone.runner.release()]);
  });

  it('the same seed gives the same episodes', { timeout: 30_000 }, async () => {
    const a = await generate(4, 8, 5);
    const b = await generate(4, 8, 5);
    expect(a.eps.map((e) => Array.from(e.tokens))).toEqual(b.eps.map((e) => Array.from(e.tokens)));
    expect(a.eps.map((e) => Array.from(e.logprobs))).toEqual(b.eps.map((e) => Array.from(e.logprobs)));
    await Promise.all([a.runner.release(), b.runner.release()]);
  });
});

describe('asynchronous token trainer (ort-web WASM, virtual clock)', () => {
  async function train(maxStaleness: number, iterations: number) {
    const engine = await loadNodeEngine('ort-web-wasm');
    const trainer = await createContinuousTrainer(
      {
        ...DEFAULT_TOKEN_TRAINER,
        env: { id: 'test/slow-digit' },
        model: { kind: 'transformer', dModel: 32, nLayers: 1, nHeads: 2, dFF: 64, context: CTX },
        algo: { ...defaultsFor('grpo'), lr: 2e-3, entropyCoef: 0, updateEpochs: 4, minibatches: 4, tis: { enabled: true, cap: 2 } },
        groups: 4,
        learnerBatch: 16,
        maxActionTokens: 4,
        seed: 2,
        scheduling: { maxStaleness, kvRows: 0 },
      },
      engine,
      new VirtualClock(),
    );
    const reports = [];
    for (let i = 0; i < iterations; i++) reports.push(await trainer.step());
    await trainer.release();
    return reports;
  }

  it('bounded staleness, per-token IS ratios, TITO on fresh tokens, and it learns', { timeout: 120_000 }, async () => {
    const r = await train(2, 14);
    const maxStale = Math.max(...r.map((x) => x.metrics['async/staleness_max']!));
    expect(maxStale).toBeGreaterThan(0); // stragglers were trained late (partial rollouts)
    expect(maxStale).toBeLessThanOrEqual(2);
    for (const x of r) {
      expect(x.metrics['mismatch/logprob_abs_diff_max']).toBeLessThanOrEqual(1e-4);
      expect(x.metrics['train/batch_episodes']).toBe(4 * defaultsFor('grpo').groupSize);
      // Every trained token is a policy token of the recorded episode, sampled within the bound.
      for (const ep of x.episodes) for (let i = 0; i < ep.versions.length; i++) if (ep.lossMask[i]) expect(x.metrics['train/policy_version']! - 1 - ep.versions[i]).toBeLessThanOrEqual(2);
    }
    expect(r.some((x) => Number.isFinite(x.metrics['async/is_ratio_mean']))).toBe(true);
    expect(r[0].metrics['episode/success_rate']).toBeLessThan(0.5);
    const tail = r.slice(-3).map((x) => x.metrics['episode/success_rate']!);
    // ≈ 0.1 at the start; 0.72–0.88 over the last three iterations (seed 2).
    expect(Math.max(...tail)).toBeGreaterThanOrEqual(0.6);
  });

  it('a token rollout worker decodes while the learner trains: weights sync by version, TITO holds', { timeout: 60_000 }, async () => {
    const engine = await loadNodeEngine('ort-web-wasm');
    const trainer = await createContinuousTrainer(
      {
        ...DEFAULT_TOKEN_TRAINER,
        env: { id: 'tools/flaky-api', kwargs: { latencyMedianMs: 5 } },
        model: { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: 256 },
        algo: { ...defaultsFor('grpo'), groupSize: 4, tis: { enabled: true, cap: 2 } },
        groups: 2,
        learnerBatch: 8,
        maxActionTokens: 8,
        seed: 4,
        scheduling: { maxStaleness: 1, kvRows: 4 },
      },
      engine,
      new VirtualClock(), // unused: the worker waits in real time
      undefined,
      undefined,
      nodeTokenWorker,
    );
    try {
      for (let i = 0; i < 4; i++) {
        const r = await trainer.step();
        expect(r.metrics['train/batch_episodes']).toBe(8);
        expect(r.metrics['async/staleness_max']).toBeLessThanOrEqual(1);
        // Tokens sampled in the worker by the version being trained score the same in the learner.
        expect(r.metrics['mismatch/logprob_abs_diff_max']).toBeLessThanOrEqual(1e-4);
        for (const ep of r.episodes) expect(ep.versions.some((v, j) => ep.lossMask[j] === 1 && v >= 0)).toBe(true);
      }
    } finally {
      await trainer.release();
    }
  });

  it('maxStaleness 0 is synchronous: every trained token is fresh', { timeout: 60_000 }, async () => {
    const r = await train(0, 3);
    for (const x of r) {
      expect(x.metrics['async/staleness_max']).toBe(0);
      expect(x.metrics['async/episodes_aborted']).toBe(0);
    }
  });

  it('an episode that arrives after its group became too stale closes the group instead of being trained', { timeout: 60_000 }, async () => {
    // A source that holds the first group to finish back until two weight syncs have passed (as
    // a worker's queue or a message in transit can): its episodes then arrive 2 versions old, over
    // the bound of 1, after the trainer's drop for that version has already run.
    const engine = await loadNodeEngine('ort-web-wasm');
    let syncs = 0;
    let victim = -1;
    let held: TokenEpisode[] = [];
    let releasedOld = 0;
    const factory: TokenSourceFactory = async (init) => {
      const decoder = await engine.createDecoder(makeTokenModel(init.model), init.rows, init.weights, init.prefillStep);
      const inner = new LocalTokenSource({ decoder, makeEnv: () => new SlowDigitEnv(), clock: new VirtualClock(), rng: new Rng(init.seed), temperature: 1, maxActionTokens: init.maxActionTokens });
      return {
        enqueue: (specs) => inner.enqueue(specs),
        async next() {
          for (;;) {
            const eps = await inner.next();
            if (victim < 0 && eps.length > 0) victim = eps[0].group;
            held.push(...eps.filter((e) => e.group === victim));
            const out = eps.filter((e) => e.group !== victim);
            if ((syncs >= 2 || eps.length === 0) && held.length > 0) {
              if (syncs >= 2) releasedOld += held.length;
              out.push(...held);
              held = [];
            }
            if (out.length > 0 || eps.length === 0) return out;
          }
        },
        setWeights: async (w, v) => {
          syncs++;
          await inner.setWeights(w, v);
        },
        drop: (groups, minVersion) => inner.drop(groups, minVersion),
        stats: () => inner.stats(),
        samplingState: () => inner.samplingState(),
        setSamplingState: (state) => inner.setSamplingState(state),
        release: () => inner.release(),
      };
    };
    const trainer = await createContinuousTrainer(
      {
        ...DEFAULT_TOKEN_TRAINER,
        env: { id: 'test/slow-digit' },
        model: { kind: 'transformer', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, context: CTX },
        algo: { ...defaultsFor('grpo'), groupSize: 4, tis: { enabled: true, cap: 2 } },
        groups: 2,
        learnerBatch: 8,
        maxActionTokens: 4,
        seed: 6,
        scheduling: { maxStaleness: 1, kvRows: 0 },
      },
      engine,
      new VirtualClock(),
      undefined,
      undefined,
      factory,
    );
    try {
      let aborted = 0;
      for (let i = 0; i < 5; i++) {
        const r = await trainer.step();
        aborted += r.metrics['async/episodes_aborted']!;
        for (const ep of r.episodes) expect(ep.group).not.toBe(victim);
        expect(r.metrics['async/staleness_max']).toBeLessThanOrEqual(1);
      }
      expect(releasedOld).toBe(4); // the whole group came late...
      expect(aborted).toBeGreaterThanOrEqual(4); // ...and was thrown away on arrival
    } finally {
      await trainer.release();
    }
  });
});
