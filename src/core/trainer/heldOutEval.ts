/**
 * Held-out pass@1 and pass@k while a run trains: every `every` iterations, before that
 * iteration's update, the current weights play `k` samples (temperature 1) of each of
 * `questions` held-out seeds (heldOutSeeds: tasks no rollout or warm start trained on).
 *
 *   pass@1 = successes / (questions · k)          (the unbiased estimate from k samples)
 *   pass@k = share of questions with ≥ 1 success among their k samples
 *
 * Both go into that iteration's metrics (`eval/pass_at_one`, `eval/pass_at_k`), so a chart shows
 * whether RL raised what the policy solves at all (pass@k) or only how reliably it solves what it
 * already could (pass@1 rising toward a flat pass@k: sharpening).
 */
import type { Checkpoint } from '../runs/checkpoint.ts';
import type { PolicyModel, Weights } from '../models/types.ts';
import type { LiveHyper } from '../update/hyper.ts';
import type { RewardLab } from '../reward/userTerms.ts';
import type { StepEpisode } from '../rollout/stepEpisode.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import { heldOutSeeds } from '../util/rng.ts';
import type { IterationReport, RunTrainer } from './api.ts';

export interface HeldOutEvalConfig {
  /** Iterations between evaluations (0 = none); iteration 0 (before any update) is always one. */
  every: number;
  /** Held-out questions (seeds) per evaluation. */
  questions: number;
  /** Samples per question at temperature 1: the k of pass@k. */
  k: number;
}

/**
 * pass@1 and pass@k from `successes[q][s]`: sample s of question q succeeded. Every question
 * must have the same number of samples k ≥ 1.
 */
export function passAtK(successes: readonly (readonly boolean[])[]): { passAt1: number; passAtK: number } {
  if (successes.length === 0) throw new Error('passAtK: no questions');
  const k = successes[0].length;
  if (k === 0 || successes.some((s) => s.length !== k)) throw new Error('passAtK: every question needs the same number (≥ 1) of samples');
  let hits = 0;
  let solved = 0;
  for (const s of successes) {
    const n = s.filter(Boolean).length;
    hits += n;
    if (n > 0) solved++;
  }
  return { passAt1: hits / (successes.length * k), passAtK: solved / successes.length };
}

/** Plays the k samples of every question (question-major seeds, so one question's samples differ by the sampler only). */
export async function heldOutPassAtK(trainer: Pick<RunTrainer, 'evaluate'>, cfg: Pick<HeldOutEvalConfig, 'questions' | 'k'>): Promise<{ passAt1: number; passAtK: number }> {
  const questions = heldOutSeeds(cfg.questions);
  const seeds = questions.flatMap((q) => Array<number>(cfg.k).fill(q));
  const eps = await trainer.evaluate(seeds, 1);
  return passAtK(questions.map((_, i) => eps.slice(i * cfg.k, (i + 1) * cfg.k).map((e) => e.success)));
}

/** A trainer whose step() adds the held-out pass@1 / pass@k metrics every `every` iterations. */
export class HeldOutEvalTrainer<E extends StepEpisode | TokenEpisode = StepEpisode | TokenEpisode> implements RunTrainer<E> {
  constructor(
    private readonly inner: RunTrainer<E>,
    private readonly cfg: HeldOutEvalConfig,
  ) {}

  get model(): PolicyModel {
    return this.inner.model;
  }
  get iteration(): number {
    return this.inner.iteration;
  }
  get version(): number {
    return this.inner.version;
  }
  get canCheckpoint(): boolean {
    return this.inner.canCheckpoint;
  }

  async step(): Promise<IterationReport<E>> {
    let found: Record<string, number> = {};
    if (this.cfg.every > 0 && this.inner.iteration % this.cfg.every === 0) {
      const t0 = performance.now();
      const r = await heldOutPassAtK(this.inner, this.cfg);
      found = { 'eval/pass_at_one': r.passAt1, 'eval/pass_at_k': r.passAtK, 'perf/eval_s': (performance.now() - t0) / 1000 };
    }
    const r = await this.inner.step();
    return { ...r, metrics: { ...r.metrics, ...found } };
  }
  evaluate(seeds: readonly number[], temperature?: number): Promise<E[]> {
    return this.inner.evaluate(seeds, temperature);
  }
  setHyper(h: LiveHyper): void {
    this.inner.setHyper(h);
  }
  setRewardLab(lab: RewardLab | null): void {
    this.inner.setRewardLab(lab);
  }
  getWeights(): Promise<Weights> {
    return this.inner.getWeights();
  }
  checkpoint(): Promise<Checkpoint> {
    return this.inner.checkpoint();
  }
  restore(checkpoint: Checkpoint): Promise<void> {
    return this.inner.restore(checkpoint);
  }
  release(): Promise<void> {
    return this.inner.release();
  }
}
