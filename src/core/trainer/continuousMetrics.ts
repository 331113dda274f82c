/**
 * What the continuous token loop's counters say about one iteration: the differences of its slot
 * statistics (rollout/tokenContinuous.ts) since the last iteration, as the perf numbers the
 * metrics phase reports and the loop's own `async/*` and `perf/*` keys.
 */
import type { TokenSlotStats } from '../rollout/tokenContinuous.ts';
import type { IterationMetricInputs } from '../metrics/iterationMetrics.ts';

type BatchPerf = NonNullable<IterationMetricInputs['perf']>;

export interface ContinuousIteration {
  /** The loop's statistics at the last iteration's end and now (now: plus the groups in flight). */
  prev: TokenSlotStats;
  now: TokenSlotStats & { inFlight: number };
  /** Episodes aborted after their group was collected (late arrivals of a dropped group). */
  lateAborted: number;
  /** Episodes trained. */
  episodes: number;
  /** Seconds: collect, collect + train, and the whole iteration; TIS scoring. */
  rolloutS: number;
  trainS: number;
  iterS: number;
  tisS: number;
}

/** The perf block of the metrics phase and the loop's extra keys. */
export function continuousMetrics(it: ContinuousIteration): { perf: BatchPerf; keys: Record<string, number> } {
  const d = (k: keyof TokenSlotStats): number => it.now[k] - it.prev[k];
  const contextTok = d('contextTokens');
  return {
    perf: {
      envStepsPerS: d('envSteps') / Math.max(1e-9, it.rolloutS),
      tokensPerS: d('policyTokens') / Math.max(1e-9, it.rolloutS),
      rolloutS: it.rolloutS,
      trainS: it.trainS,
      learnerIdleRatio: it.rolloutS / Math.max(1e-9, it.iterS),
      rolloutIdleRatio: it.trainS / Math.max(1e-9, it.iterS),
      kvCacheHitRate: contextTok > 0 ? d('cachedTokens') / contextTok : 0,
    },
    keys: {
      'async/episodes_aborted': d('aborted') + it.lateAborted,
      'async/kv_evictions': d('evictions'),
      'async/in_flight': it.now.inFlight,
      'perf/tool_wait_s': d('toolWaitMs') / 1000,
      'perf/episodes_per_s': it.episodes / Math.max(1e-9, it.iterS),
      'perf/tis_s': it.tisS,
      'perf/iteration_s': it.iterS,
    },
  };
}
