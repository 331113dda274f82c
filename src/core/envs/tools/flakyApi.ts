/**
 * # tools/flaky-api
 *
 * ## Description
 * Fetch one value from an unreliable service and report it. `call(key)` fails with
 * probability `failureProb` (`error: 503 service unavailable, try again`, a timeout, a reset
 * connection) and every call costs `callCost`, so the agent must learn to retry after a failure,
 * to stop calling once it has the value, and to answer with exactly that value. Each call takes a
 * long-tailed simulated time (log-normal: median 20 ms, sigma 1.7, so p99 is about 1 s) reported
 * in `info.latencyMs`; drive the env with `stepTimed` to wait on a (virtual) clock.
 *
 * ## Observation
 * `{ text }`, at most 240 characters inside the shared vocabulary. At reset: the task, e.g.
 * `task: fetch the value stored under k17 and answer with it. tools: call(key), retry(),
 * answer(value). each call costs 0.05.` After each turn: `result: k17 = 4821`, an `error:` line
 * (a failed call, an unknown key, a malformed call), or the verdict `done: ...`.
 *
 * ## Actions
 * One call per turn, at most 80 characters: `call(key)` (keys `k0` .. `k<keys-1>`), `retry()`
 * (repeats the last call(key); costs like a call), `answer(value)` (a whole number; ends the
 * episode). Anything else is malformed: an `error:` reply, the turn is spent, no cost.
 *
 * ## Reward
 * `-callCost` on every step that reaches the service (call or retry, failed or not); 1 for a
 * correct answer, 0 for a wrong one. `info.progress` is 1 on the first successful fetch of the
 * asked-for key (the subgoal the `progress` shaping term rewards). An episode's return lies in
 * [-callCost * maxTurns, 1 - callCost]; the expert's expected return is
 * 1 - callCost / (1 - failureProb).
 *
 * ## Termination
 * Terminated by `answer(...)` (`info.success` = correct). Truncated after `maxTurns` turns.
 *
 * ## Kwargs
 * See `FlakyApiConfig`.
 */
import type { Rng } from '../../util/rng.ts';
import type { EnvSpec } from '../types.ts';
import type { EnvKwargs } from '../registry.ts';
import {
  ToolEnvBase,
  LATENCY_RULES,
  intIn,
  normalizeArg,
  numIn,
  parseWholeNumber,
  quote,
  readKwargs,
  toolActionSpace,
  toolObservationSpace,
} from './base.ts';
import type { Outcome, ToolCall, ToolDef, ToolLatencyConfig, ToolTurnsConfig } from './base.ts';

export const FLAKY_API_ID = 'tools/flaky-api';

export interface FlakyApiConfig extends ToolTurnsConfig, ToolLatencyConfig {
  /** Probability that one call(key) or retry() fails, independently per call. */
  failureProb: number;
  /** Reward subtracted for every call that reaches the service (failed or not). */
  callCost: number;
  /** Keys the service holds (`k0` .. `k<keys-1>`); the task asks for one of them. */
  keys: number;
  /**
   * The expert only (the env's dynamics ignore it): after each successful fetch of the value, the
   * probability that it fetches it again instead of answering (a demonstrator that over-calls; 0 =
   * it stops at once). Drawn per episode from the task seed, so an episode's expert is fixed.
   */
  expertExtraCallProb: number;
}

export const FLAKY_API_DEFAULTS: FlakyApiConfig = {
  maxTurns: 8,
  failureProb: 0.3,
  callCost: 0.05,
  keys: 20,
  expertExtraCallProb: 0,
  latencyMedianMs: 20,
  latencySigma: 1.7,
};

const TOOLS: readonly ToolDef[] = [
  { name: 'call', signature: 'call(key)' },
  { name: 'retry', signature: 'retry()' },
  { name: 'answer', signature: 'answer(value)' },
];

const FAILURES = ['503 service unavailable', 'request timed out', 'connection reset'];

export class FlakyApiEnv extends ToolEnvBase {
  readonly spec: EnvSpec;
  protected readonly tools = TOOLS;
  readonly config: FlakyApiConfig;

  /** key -> stored value, e.g. `k17` -> 4821. */
  private values = new Map<string, number>();
  private target = '';
  /** The key of the last call that reached the service (what retry() repeats), or null. */
  private lastKey: string | null = null;
  private lastFailed = false;
  /** Has a successful call shown the target's value? (then the expert answers) */
  private valueShown = false;
  /** Successful fetches of the asked-for value this episode. */
  private fetches = 0;
  /** Fetches the expert makes before it answers (1 + its extra calls, drawn at reset). */
  private expertFetches = 1;

  constructor(config: Partial<FlakyApiConfig> = {}) {
    super();
    this.config = { ...FLAKY_API_DEFAULTS, ...config };
    const c = this.config;
    this.spec = {
      id: FLAKY_API_ID,
      title: 'Flaky API',
      description:
        `Fetch one value from a service that fails ${Math.round(c.failureProb * 100)}% of the time ` +
        `with long-tailed latency, and answer with it. Each call costs ${c.callCost}: the agent ` +
        'must retry after failures, stop once it has the value, and copy it exactly.',
      family: 'tool',
      observationSpace: toolObservationSpace(),
      actionSpace: toolActionSpace(),
      // Per step: a call costs callCost; the answer step pays 1 or 0.
      rewardRange: [-c.callCost, 1],
      maxSteps: c.maxTurns,
    };
  }

  protected newEpisode(rng: Rng): string {
    this.values = new Map();
    for (let k = 0; k < this.config.keys; k++) this.values.set(`k${k}`, rng.int(1000, 10000));
    this.target = `k${rng.int(0, this.config.keys)}`;
    this.lastKey = null;
    this.lastFailed = false;
    this.valueShown = false;
    this.fetches = 0;
    // A stream of its own, forked after the task is drawn: the expert's choice never changes the task.
    const expertRng = rng.fork();
    this.expertFetches = 1;
    while (this.expertFetches < this.config.maxTurns && expertRng.bernoulli(this.config.expertExtraCallProb)) this.expertFetches++;
    const tools = TOOLS.map((t) => t.signature).join(', ');
    return `task: fetch the value stored under ${this.target} and answer with it. tools: ${tools}. each call costs ${this.config.callCost}.`;
  }

  protected handle(call: ToolCall): Outcome {
    if (call.tool === 'answer') {
      const n = parseWholeNumber(call.args);
      if (n === null) return { kind: 'malformed', error: `answer takes the value, a whole number; got ${quote(call.args.trim(), 20)}` };
      const want = this.values.get(this.target)!;
      const success = n === want;
      return { kind: 'final', success, reward: success ? 1 : 0, text: success ? `done: correct, ${want}.` : `done: wrong, the value is ${want}.` };
    }
    let key: string;
    if (call.tool === 'retry') {
      if (call.args.trim() !== '') return { kind: 'malformed', error: 'retry takes no argument: write retry()' };
      // Nothing reached the service: no cost, no time, nothing drawn.
      if (this.lastKey === null) return { kind: 'tool', failed: true, latencyMs: 0, text: 'error: nothing to retry yet; use call(key) first' };
      key = this.lastKey;
    } else {
      key = normalizeArg(call.args);
      if (key === '') return { kind: 'malformed', error: 'call needs a key, e.g. call(k3)' };
    }
    // Every call that reaches the service draws the same three numbers (latency, failure, kind)
    // whatever the key, so the k-th call of every rollout from one seed meets the same luck.
    const latencyMs = this.drawLatency(this.config.latencyMedianMs, this.config.latencySigma);
    const failed = this.events.bernoulli(this.config.failureProb);
    const failure = this.events.choice(FAILURES);
    const reward = -this.config.callCost;
    this.lastKey = key;
    this.lastFailed = failed;
    if (failed) return { kind: 'tool', failed: true, latencyMs, reward, text: `error: ${failure}, try again` };
    const value = this.values.get(key);
    if (value === undefined) return { kind: 'tool', failed: true, latencyMs, reward, text: `error: no such key ${quote(key, 20)}` };
    // Progress: the first successful fetch of the asked-for value.
    const progress = key === this.target && !this.valueShown ? 1 : 0;
    if (key === this.target) {
      this.valueShown = true;
      this.fetches++;
    }
    return { kind: 'tool', failed: false, latencyMs, reward, progress, text: `result: ${key} = ${value}` };
  }

  protected expert(): string {
    if (this.valueShown && this.fetches >= this.expertFetches) return `answer(${this.values.get(this.target)!})`;
    return this.lastKey === this.target && this.lastFailed ? 'retry()' : `call(${this.target})`;
  }

  protected timeoutNote(): string {
    return `the value was ${this.values.get(this.target)!}.`;
  }
}

export function makeFlakyApi(kwargs: EnvKwargs = {}): FlakyApiEnv {
  return new FlakyApiEnv(
    readKwargs(FLAKY_API_ID, kwargs, FLAKY_API_DEFAULTS, {
      maxTurns: intIn(1, 100),
      failureProb: numIn(0, 1),
      callCost: numIn(0, 1),
      keys: intIn(1, 1000),
      expertExtraCallProb: numIn(0, 1),
      ...LATENCY_RULES,
    }),
  );
}
