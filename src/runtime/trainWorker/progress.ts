/**
 * Progress from inside the training worker's long work, for the page's watchdog (see
 * runtime/liveness.ts), without touching src/core: the engine the trainer gets reports every
 * session build, inference call, decode call and train step, and the reward lab's scorer scores
 * a batch in slices of about `sliceMs` each, reporting between them (one call for a whole batch
 * of a 5 ms term was 30+ s of silence). Both are wrappers: the trainer computes exactly what it
 * computed before (the slices are scored in order, in the same sandbox).
 */
import type { Engine, Learner, PolicyRunner, TokenDecoder } from '../../core/engine/types.ts';
import type { RawTermScores, RewardTermsScorer } from '../../core/reward/rewardTerms.ts';
import type { ScoreEpisode } from '../../core/reward/stepRecord.ts';
import type { RewardLab } from '../../core/reward/userTerms.ts';
import type { Progress } from '../liveness.ts';
import { yieldToEvents } from '../pool/yield.ts';

/**
 * `obj` with `progress(stage)` reported before and after each call of the methods named in
 * `stages` (method → stage). Every other member reads and writes through to `obj` itself (methods
 * bound to it), so getters, fields like `hyper` and `version`, and optional members such as
 * `copyPrefix` behave as before.
 */
function reporting<T extends object>(obj: T, stages: Readonly<Record<string, string>>, progress: Progress): T {
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(obj, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      let f = bound.get(prop);
      if (f === undefined || (f as { original?: unknown }).original !== v) {
        const stage = typeof prop === 'string' ? stages[prop] : undefined;
        const fn = v as (...a: unknown[]) => unknown;
        f = stage
          ? (...args: unknown[]) => {
              progress(stage);
              const r = fn.apply(target, args);
              if (r instanceof Promise) return r.finally(() => progress(stage));
              progress(stage);
              return r;
            }
          : fn.bind(target);
        (f as { original?: unknown }).original = v;
        bound.set(prop, f);
      }
      return f;
    },
    set(target, prop, value) {
      return Reflect.set(target, prop, value, target);
    },
  });
}

/** What each of an engine's session builders reports, and what the session it builds reports per call. */
const SESSIONS: Readonly<Record<string, { build: string; calls: Readonly<Record<string, string>> }>> = {
  createLearner: { build: 'building the learner session', calls: { step: 'train step', getWeights: 'reading weights', exportState: 'reading the learner state' } },
  createPolicy: { build: 'building a policy session', calls: { run: 'policy inference' } },
  createDecoder: { build: 'building a decoder session', calls: { next: 'decoding' } },
};

/** `engine` reporting progress per session build and per session run (every other member as it was). */
export function progressEngine(engine: Engine, progress: Progress): Engine {
  return new Proxy(engine, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      const s = typeof prop === 'string' ? SESSIONS[prop] : undefined;
      const fn = v as (...a: unknown[]) => unknown;
      if (!s) return fn.bind(target);
      return async (...args: unknown[]) => {
        progress(s.build);
        const session = (await fn.apply(target, args)) as Learner | PolicyRunner | TokenDecoder;
        progress(s.build);
        return reporting(session, s.calls, progress);
      };
    },
  });
}

export interface SlicedScorerOptions {
  /** Aim for slices of about this many ms (default 250). */
  sliceMs?: number;
  /** Episodes in the first slice (default 4); later slices adapt to the measured time per episode. */
  firstSlice?: number;
  now?: () => number;
}

/**
 * `scorer` scoring a batch a slice of episodes at a time, with `progress` between slices. The
 * slice size adapts to the measured time per episode so each slice takes about `sliceMs`.
 */
export function slicedScorer(scorer: RewardTermsScorer, progress: Progress, o: SlicedScorerOptions = {}): RewardTermsScorer {
  const sliceMs = o.sliceMs ?? 250;
  const now = o.now ?? (() => performance.now());
  let per = Math.max(1, o.firstSlice ?? 4);
  return {
    get terms() {
      return scorer.terms;
    },
    lineOf: (term) => scorer.lineOf(term),
    close: () => scorer.close(),
    // A stop mid-batch (the worker's release) reaches the sandbox, which ends at its next slice.
    interrupt: () => scorer.interrupt?.(),
    async score(episodes: readonly ScoreEpisode[]): Promise<RawTermScores[]> {
      const out: RawTermScores[] = [];
      for (let i = 0; i < episodes.length; ) {
        const n = Math.min(per, episodes.length - i);
        progress(`scoring reward terms (episodes ${i + 1}–${i + n} of ${episodes.length})`);
        const t0 = now();
        const part = await scorer.score(episodes.slice(i, i + n));
        for (const p of part) out.push(p);
        const ms = now() - t0;
        // Next slice: as many episodes as fit in sliceMs at this slice's pace (at most doubling).
        per = Math.max(1, Math.min(2 * n, Math.floor((n * sliceMs) / Math.max(ms, 1e-3))));
        i += n;
        // A task boundary between slices: the worker's messages (stop, pause, a ping) are handled
        // here, and a stop's interrupt() ends the batch at the next slice.
        if (i < episodes.length) await yieldToEvents();
      }
      progress(`scored reward terms (${episodes.length} episodes)`);
      return out;
    },
  };
}

/** `lab` with its scorer sliced (see slicedScorer); null and undefined pass through. */
export function progressLab<L extends RewardLab | null | undefined>(lab: L, progress: Progress, o?: SlicedScorerOptions): L {
  if (!lab) return lab;
  return { ...lab, scorer: slicedScorer(lab.scorer, progress, o) };
}
