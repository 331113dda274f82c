/**
 * The one trainer: a learner, a collector (the rollout source of the run's env family: grid step
 * pool, lockstep token loop, continuous token loop; collector.ts) and a scheduler (the staleness
 * bound, sync = 0; the prompt pool as its option). Each iteration at learner version V:
 *
 *   collect     the collect pipeline (collect.ts `gather`) over the collector's rollouts: play,
 *               score (user reward terms included), dynamic sampling, the algorithm's needs
 *               (ReMax's greedy episodes, GiGPO's anchor states); then the collector's batch for V,
 *               every position ≤ maxStaleness versions old
 *   score       the KL reward penalty, advantages, aggregation weights (phases.ts: scoreBatch)
 *   weights/TIS stale positions' π_old from the proximal policy, TIS (phases.ts: trainBatch)
 *   update      epochs × minibatches of the ONNX train step
 *   sync        version V + 1 to the collector when the update stepped
 *   metrics     metrics/batchMetrics.ts over the batch, the collector's perf and own keys, the prompt
 *               pool's `budget/*`, ReMax's `remax/*`, the reward schedule's step, the lab's keys
 *
 * Written once here for every family: setHyper, the reward lab, checkpoint/restore of the learner,
 * counters, EMA baseline and rewards, and release.
 */
import { EMA_BASELINE_INIT, type EmaBaselineState } from '../algos/advantages.ts';
import type { AlgoConfig } from '../algos/config.ts';
import type { Learner } from '../engine/types.ts';
import { keepApplicable } from '../metrics/lookup.ts';
import type { Weights } from '../models/types.ts';
import type { RewardLab } from '../reward/userTerms.ts';
import type { StepEpisode } from '../rollout/stepEpisode.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import { CHECKPOINT_FORMAT, CHECKPOINT_VERSION, type Checkpoint } from '../runs/checkpoint.ts';
import { perActionAdvantages } from '../update/batchAdvantages.ts';
import { applyLiveHyper, type LiveHyper } from '../update/hyper.ts';
import { buildIterationMetrics } from '../metrics/iterationMetrics.ts';
import { batchMetrics, sampledMetrics } from '../metrics/batchMetrics.ts';
import type { IterationReport, RunTrainer } from './api.ts';
import { greedyMetrics, type Collected, type Objective, type Skipped } from './collector.ts';
import type { Collector } from './collectorShell.ts';
import type { Scheduler } from './scheduler.ts';
import { scoreBatch, trainBatch } from './phases.ts';
import { gather } from './collect.ts';
import type { RewardScoring } from './rewards.ts';

/** What a Trainer is made of (the create functions of the collectors build them). */
export interface TrainerParts<E extends StepEpisode | TokenEpisode, C extends Collector<E>> {
  algo: AlgoConfig;
  collector: C;
  scheduler: Scheduler;
  learner: Learner;
  rewards: RewardScoring;
  /** In place of the policy gradient (score, advantages, off-policy, update): a distill stage's objective. */
  objective?: Objective<E>;
}

export class Trainer<E extends StepEpisode | TokenEpisode = StepEpisode | TokenEpisode, C extends Collector<E> = Collector<E>> implements RunTrainer<E> {
  /** Iterations trained so far. */
  iteration = 0;
  /** The learner's policy version (updates applied). */
  version = 0;
  readonly canCheckpoint = true;
  readonly algo: AlgoConfig;
  readonly collector: C;
  readonly scheduler: Scheduler;
  readonly rewards: RewardScoring;
  private readonly learner: Learner;
  private readonly objective: Objective<E> | null;
  /** The REINFORCE EMA baseline (advantages of 'ema' estimators). */
  private ema: EmaBaselineState = EMA_BASELINE_INIT;

  constructor(parts: TrainerParts<E, C>) {
    this.algo = parts.algo;
    this.collector = parts.collector;
    this.scheduler = parts.scheduler;
    this.learner = parts.learner;
    this.rewards = parts.rewards;
    this.objective = parts.objective ?? null;
  }

  get model() {
    return this.collector.model;
  }

  /** Live hyperparameters (lr, entropy_coef, clip_low, clip_high, kl_coef) as the learner sees them. */
  get hyper(): Record<string, number> {
    return this.learner.hyper;
  }

  /** Change live hyperparameters (from the next train step) and reward weights (from the next episodes scored). */
  setHyper(h: LiveHyper): void {
    // Validate before touching anything: a refused edit leaves the run as it was.
    if (h.rewardWeights) this.rewards.setWeights(h.rewardWeights);
    applyLiveHyper(this.learner.hyper, h);
  }

  /**
   * Score with these user reward terms from the next batch scored on (null = none). The caller
   * owns the scorer: it closes the one it replaces. Batches already scored keep their values.
   */
  setRewardLab(lab: RewardLab | null): void {
    this.rewards.setLab(lab);
  }

  getWeights(): Promise<Weights> {
    return this.learner.getWeights();
  }

  evaluate(seeds: readonly number[], temperature = 0): Promise<E[]> {
    return this.collector.evaluate(seeds, temperature);
  }

  /** One iteration: collect → score → advantages → weights/TIS → update → sync → metrics. */
  async step(): Promise<IterationReport<E>> {
    const it = this.iteration;
    const start = performance.now();
    // The lab's version: it is swapped only between iterations, so it scores the whole batch.
    const labVersion = this.rewards.begin();
    const c = await this.collect(it);
    if ('skipped' in c) return this.skip(c, labVersion);
    const collected = performance.now();
    if (this.objective) return this.objectiveStep(this.objective, c, { start, collected, labVersion });

    const sc = await scoreBatch(this.algo, c.batch, this.collector.reference, this.ema, c.ctx);
    this.ema = sc.adv.ema;
    const tr = await trainBatch(this.learner, this.algo, sc, this.version, this.collector.proximal, this.collector.rng);
    this.scheduler.checkBound(tr.off.stale.max, it);
    const trained = performance.now();

    const stepped = tr.upd.steps > 0;
    if (stepped) this.version++;
    await this.collector.sync(stepped ? await this.learner.getWeights() : null, this.version);
    const budget = this.scheduler.record(c.outcomes, this.algo.dynamicSampling.spreadTol);
    this.iteration++;
    const own = c.metrics(sc, tr, { start, collected, trained, synced: performance.now() });

    const metrics = {
      ...batchMetrics({
        sampled: c.sampled,
        batch: c.batch,
        trainedSuccess: c.episodes.map((ep) => ep.success),
        adv: sc.adv,
        off: tr.off,
        tis: tr.tis,
        upd: tr.upd,
        lr: this.learner.hyper.lr,
        version: this.version,
        groups: c.groups,
        perf: own.perf,
        extra: c.extra,
      }),
      ...own.keys,
      ...tr.correction,
      ...budget,
      ...(c.greedy ? greedyMetrics(c.greedy) : {}),
    };
    this.rewards.advance(metrics);
    this.rewards.labMetrics(metrics, labVersion);
    keepApplicable(metrics, this.collector.metricRun);
    return { iteration: it, metrics, episodes: c.episodes, episodeRewards: sc.totals, episodeAdvantages: sc.adv.episodeAdv, episodeTurnAdvantages: perActionAdvantages(sc.batch, sc.adv.adv), ...(c.ctx.branches ? { branches: c.ctx.branches } : {}), lens: tr.lens, allApplied: tr.upd.allApplied };
  }

  /**
   * The collect pipeline (collect.ts) over the collector's rollouts: request → play → score →
   * dynamic sampling → the algorithm's needs, then the collector's batch of what was gathered.
   */
  private async collect(it: number): Promise<Collected<E> | Skipped> {
    const target = await this.collector.begin(it, this.version);
    const g = await gather(this.collector.rollouts, this.collector.algo, it, target);
    return this.collector.finish(g);
  }

  /**
   * The iteration under an objective (a distill stage): it trains the batch, the version moves
   * on when it stepped, and the metrics are the sampled episodes', the collector's perf and the
   * objective's own keys; the episodes' advantages are 0 (none is computed).
   */
  private async objectiveStep(objective: Objective<E>, c: Collected<E>, t: { start: number; collected: number; labVersion: number }): Promise<IterationReport<E>> {
    const it = this.iteration;
    const r = await objective.train(this.learner, c);
    const trained = performance.now();
    if (r.steps > 0) this.version++;
    await this.collector.sync(r.steps > 0 ? await this.learner.getWeights() : null, this.version);
    this.iteration++;
    const own = c.metrics(null, null, { start: t.start, collected: t.collected, trained, synced: performance.now() });
    const metrics = {
      ...buildIterationMetrics({ episodes: c.sampled.map((e) => e.summary), perf: own.perf, extra: c.extra }),
      ...r.metrics,
      'actor/lr': this.learner.hyper.lr,
      ...sampledMetrics(c.sampled),
      'train/updates': r.steps,
      'train/policy_version': this.version,
      ...own.keys,
    };
    this.rewards.advance(metrics);
    this.rewards.labMetrics(metrics, t.labVersion);
    keepApplicable(metrics, this.collector.metricRun);
    return { iteration: it, metrics, episodes: c.episodes, episodeRewards: c.batch.scores.slice(), episodeAdvantages: new Float64Array(c.episodes.length), allApplied: r.allApplied };
  }

  /** Every group had zero spread and the round cap was hit: nothing to learn from, no new version. */
  private skip(c: Skipped, labVersion: number): IterationReport<E> {
    const it = this.iteration++;
    const m = c.skipped;
    this.rewards.labMetrics(m, labVersion);
    keepApplicable(m, this.collector.metricRun);
    return { iteration: it, metrics: m as IterationReport<E>['metrics'], episodes: [], episodeRewards: new Float64Array(0), episodeAdvantages: new Float64Array(0), allApplied: true };
  }

  /**
   * The full state after the last finished iteration (call between steps): the learner's
   * parameters and optimizer state, counters, live hyper, the EMA baseline, the rewards' state,
   * the prompt pool's counts, and the collector's own part (see each collector for what a resume
   * from it reproduces).
   */
  async checkpoint(): Promise<Checkpoint> {
    if (!this.learner.exportState) throw new Error('Trainer.checkpoint: this engine\'s learner cannot export its optimizer state');
    const own = await this.collector.checkpoint();
    const learner = await this.learner.exportState();
    return {
      format: CHECKPOINT_FORMAT,
      version: CHECKPOINT_VERSION,
      trainer: this.collector.kind,
      iteration: this.iteration,
      policyVersion: this.version,
      learner,
      hyper: { ...this.learner.hyper },
      ema: { ...this.ema },
      ...this.rewards.checkpoint(),
      ...own,
      ...this.scheduler.checkpoint(),
    };
  }

  /**
   * Continues from `cp` on this fresh trainer (before its first step): the learner takes the
   * parameters and Adam state (it checks every tensor's name and size before it replaces any),
   * the collector the weights at the checkpoint's version and its own state, and every counter,
   * stream and schedule its saved value. Everything is checked first; a refused checkpoint leaves
   * the trainer fresh.
   */
  async restore(checkpoint: Checkpoint): Promise<void> {
    const who = 'Trainer.restore';
    if (this.iteration !== 0 || this.version !== 0) throw new Error(`${who}: only a fresh trainer can be restored (it has trained)`);
    const cp = this.collector.checkRestore(checkpoint, this.learner, who);
    if (!this.learner.importState) throw new Error(`${who}: this engine's learner cannot import optimizer state`);
    const installRewards = this.rewards.prepareRestore(cp, who);
    const installPrompts = this.scheduler.prepareRestore(cp, who);
    this.learner.importState(cp.learner);
    for (const [k, v] of Object.entries(cp.hyper)) this.learner.hyper[k] = v;
    this.ema = { ...cp.ema };
    installRewards();
    installPrompts();
    this.iteration = cp.iteration;
    this.version = cp.policyVersion;
    await this.collector.restore(cp, await this.learner.getWeights());
  }

  /** Frees the collector first (it may wait for collects in flight), then the learner. */
  /** Frees every part, even when an earlier part's release fails (the first failure is rethrown). */
  async release(): Promise<void> {
    let first: unknown = null;
    for (const part of [this.collector, this.objective, this.learner]) {
      try {
        await part?.release();
      } catch (e) {
        first ??= e;
      }
    }
    if (first !== null) throw first;
  }
}
