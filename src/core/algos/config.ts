/**
 * Algorithm hyperparameters: one typed object, its defaults, and a zod schema that turns a
 * user-supplied JSON (preset file, URL hash, UI form) into a valid config or into messages
 * that name the field, what is wrong, and the value given.
 *
 * Defaults that depend on the algorithm (`normalizeStd`, `aggregation`) are filled after
 * parsing, so `{ "algo": "drgrpo" }` alone is a valid Dr.GRPO config.
 */
import { z } from 'zod';
import type { Aggregation } from './advantages.ts';
import { DEFAULT_TURN_CREDIT, TURN_REWARD_SOURCES, type TurnCreditConfig, type TurnRewardSource } from './turnCredit.ts';
import { algoDescriptor, ALGOS, GROUP_ALGOS, STD_NORMALIZED, type Algo } from './registry/index.ts';
import type { RewardAggregation } from './gdpo.ts';
import { correctionIssues, DEFAULT_ROLLOUT_CORRECTION, rolloutCorrectionSchema, type RolloutCorrectionConfig } from './correction/config.ts';
import { COVARIANCE_DEFAULTS, COVARIANCE_MODES, type CovarianceConfig } from './covarianceConfig.ts';

export type { Aggregation } from './advantages.ts';
export { ALGOS, GROUP_ALGOS, type Algo } from './registry/index.ts';

/** Which Monte-Carlo estimator of KL(π‖π_ref) per sampled token (Schulman, "Approximating KL"). */
export type KlEstimator = 'k1' | 'k3';

/** An algorithm's default aggregation (its descriptor's loss options). */
export function defaultAggregation(algo: Algo): Aggregation {
  return algoDescriptor(algo).loss.aggregation;
}

export interface AlgoConfig {
  /**
   * Advantage estimator and loss: one of the registered algorithms (algos/registry/, one
   * descriptor file each, whose help line says what it does and where it runs).
   */
  algo: Algo;
  /** Episodes per group, all from one start state (group algos); batch = groups × groupSize. */
  groupSize: number;
  /** REINFORCE baseline: 'batch' = batch mean reward, 'ema' = moving average over iterations. */
  baseline: 'batch' | 'ema';
  /** EMA baseline decay per iteration, in [0, 1); higher = slower, smoother baseline. */
  baselineDecay: number;
  /** Discount per step (GAE and potential shaping); 1 = undiscounted episodic return. */
  gamma: number;
  /** GAE λ: 0 = one-step TD (low variance, biased), 1 = Monte Carlo (unbiased, noisy). */
  lambda: number;
  /** GRPO: divide group-relative advantages by the group's sample std. Default and allowed: the algorithms whose descriptor has groupStd (grpo, cispo, gspo, gigpo). */
  normalizeStd: boolean;
  /** Added to the group std before dividing, so all-equal groups give 0 instead of 0/0. */
  stdEps: number;
  /** PPO: standardise advantages over the batch (CleanRL norm_adv); keeps step sizes comparable. */
  normalizeAdvantages: boolean;
  /** ε_low: the ratio is clipped below at 1 − clipLow (PPO trust region, down side). */
  clipLow: number;
  /** ε_high: clipped above at 1 + clipHigh; > clipLow is DAPO clip-higher (keeps rare tokens rising, protects exploration). */
  clipHigh: number;
  /** β, weight of KL(π‖π_ref); 0 disables the reference policy entirely. */
  klCoef: number;
  /** KL estimator per token: 'k1' = log-ratio (unbiased, noisy), 'k3' = ρ−1−log ρ (≥ 0, low variance). */
  klEstimator: KlEstimator;
  /** 'loss' = β·KL added to the loss; 'reward' = β·KL subtracted from rewards before advantages. */
  klMode: 'loss' | 'reward';
  /** Entropy bonus weight (nats⁻¹ of loss); counters premature collapse of exploration. */
  entropyCoef: number;
  /**
   * Loss aggregation over tokens: 'token' (DAPO), 'sequence' (GRPO), 'constant' (Dr.GRPO).
   * Default: 'constant' for drgrpo, 'sequence' for gspo (its objective weighs each sequence
   * 1/G), else 'token'. 'sequence' and gspo train whole sequences per minibatch on every family.
   */
  aggregation: Aggregation;
  /** L in the constant normaliser 1/(n_seqs·L), in tokens; null = the padded batch length T. */
  aggregationLen: number | null;
  /** DAPO dynamic sampling: drop groups with zero reward spread and resample. */
  dynamicSampling: {
    /** On/off; needs a group algo. */
    enabled: boolean;
    /** Most sampling rounds per iteration, the first included (≥ 1). */
    maxRounds: number;
    /** Rewards closer than this (max − min) count as equal (reward units). */
    spreadTol: number;
  };
  /** Truncated importance sampling for stale or mismatched rollouts. */
  tis: {
    /** On/off; off = weights 1 (exact only for synchronous rollouts with matching numerics). */
    enabled: boolean;
    /** Upper bound on π_old/μ per token (bias–variance trade-off; veRL default 2). */
    cap: number;
  };
  /** Multi-term rewards: 'sum' = advantages of the summed reward; 'gdpo' = each term normalised within its group, summed, standardised over the batch (GDPO; TRL normalize_then_sum). */
  rewardAggregation: RewardAggregation;
  /** Rollout correction (algos/correction/): IS, rejection sampling and M2PO on π_old/μ at every position, and a mismatch mode that makes μ ≠ π_old. */
  rolloutCorrection: RolloutCorrectionConfig;
  /** Adam learning rate (per update step). */
  lr: number;
  /** Adam β1 (first-moment decay). */
  adamBeta1: number;
  /** Adam β2 (second-moment decay). */
  adamBeta2: number;
  /** Adam ε (denominator floor). */
  adamEps: number;
  /** Clip the global gradient L2 norm to this; null = no clipping. */
  maxGradNorm: number | null;
  /** Decoupled weight decay (AdamW), per step, relative to lr. */
  weightDecay: number;
  /** PPO: weight of the value loss in the total loss. */
  valueCoef: number;
  /**
   * PPO: clip the value update to ±valueClip around the rollout-time value (return units);
   * null = unclipped ½·(V − R)².
   */
  valueClip: number | null;
  /** Passes over each batch (PPO typically 4; group methods 1 = on-policy). */
  updateEpochs: number;
  /** GiGPO: weight ω of the step-level advantage added to the episode's (0 = plain GRPO). */
  stepAdvantageWeight: number;
  /** Minibatches per pass (the batch is split into this many optimizer steps). */
  minibatches: number;
  /** MT-GRPO: λ on the outcome advantage of intermediate turns, and where each turn's reward comes from (algos/turnCredit.ts). */
  turnCredit: TurnCreditConfig;
  /** SAPO's soft gate (4/τ)·σ(τ(r − 1)) in place of the clip (algo 'sapo'). */
  sapo: {
    /** τ for tokens with A > 0: larger = the gate closes faster as the ratio leaves 1 (paper: 1). */
    tauPos: number;
    /** τ for tokens with A < 0 (paper: 1.05, above tauPos: negative updates are the less stable). */
    tauNeg: number;
  };
  /** Covariance-based entropy control, on any policy-gradient algorithm (update/covariance.ts). */
  covariance: CovarianceConfig;
  /** DAPO's soft overlong punishment, added to each episode's reward before advantages (update/lengthControl.ts). */
  overlong: {
    /** On/off. Default: on for dapo, off for the others. */
    enabled: boolean;
    /** L_c, the buffer before L_max where the penalty ramps from 0 to −1, in policy positions (steps or tokens). */
    buffer: number;
    /** L_max in policy positions; null = the batch horizon (the env's maxSteps, or the context). */
    maxLen: number | null;
    /** Reward units per unit of the ramp (veRL overlong_penalty_factor): −penalty at and beyond L_max. */
    penalty: number;
  };
  /** Episodes cut by a time limit or the context carry no loss (DAPO's overlong filtering). Default: on for dapo. */
  maskTruncated: boolean;
}

/** Defaults shared by every algorithm (the algorithm-dependent fields for GRPO). */
export const DEFAULT_ALGO_CONFIG: AlgoConfig = {
  algo: 'grpo',
  groupSize: 8,
  baseline: 'batch',
  baselineDecay: 0.9,
  gamma: 0.99,
  lambda: 0.95,
  normalizeStd: true,
  stdEps: 1e-6,
  normalizeAdvantages: true,
  clipLow: 0.2,
  clipHigh: 0.28,
  klCoef: 0,
  klEstimator: 'k3',
  klMode: 'loss',
  entropyCoef: 0.01,
  aggregation: 'token',
  aggregationLen: null,
  stepAdvantageWeight: 1,
  dynamicSampling: { enabled: false, maxRounds: 3, spreadTol: 1e-9 },
  tis: { enabled: false, cap: 2 },
  rolloutCorrection: { ...DEFAULT_ROLLOUT_CORRECTION },
  rewardAggregation: 'sum',
  lr: 3e-4,
  adamBeta1: 0.9,
  adamBeta2: 0.999,
  adamEps: 1e-8,
  maxGradNorm: 1,
  weightDecay: 0,
  valueCoef: 0.5,
  valueClip: null,
  updateEpochs: 1,
  minibatches: 1,
  turnCredit: { ...DEFAULT_TURN_CREDIT },
  sapo: { tauPos: 1, tauNeg: 1.05 },
  covariance: { ...COVARIANCE_DEFAULTS },
  overlong: { enabled: false, buffer: 16, maxLen: null, penalty: 1 },
  maskTruncated: false,
};

/** The defaults for one algorithm, with its algorithm-dependent fields filled. */
export function defaultsFor(algo: Algo): AlgoConfig {
  return {
    ...DEFAULT_ALGO_CONFIG,
    dynamicSampling: { ...DEFAULT_ALGO_CONFIG.dynamicSampling },
    tis: { ...DEFAULT_ALGO_CONFIG.tis },
    rolloutCorrection: { ...DEFAULT_ALGO_CONFIG.rolloutCorrection },
    turnCredit: { ...DEFAULT_ALGO_CONFIG.turnCredit },
    sapo: { ...DEFAULT_ALGO_CONFIG.sapo },
    covariance: { ...DEFAULT_ALGO_CONFIG.covariance },
    overlong: { ...DEFAULT_ALGO_CONFIG.overlong, enabled: algoDescriptor(algo).loss.overlong },
    maskTruncated: algoDescriptor(algo).loss.maskTruncated,
    algo,
    normalizeStd: algoDescriptor(algo).groupStd,
    aggregation: defaultAggregation(algo),
    updateEpochs: algoDescriptor(algo).updateEpochs,
  };
}

const D = DEFAULT_ALGO_CONFIG;
const num = () => z.number({ error: 'must be a number' }).refine(Number.isFinite, 'must be a finite number');
const int = () => z.number({ error: 'must be a number' }).int('must be an integer');
const unit = () => num().min(0, 'must be in [0, 1]').max(1, 'must be in [0, 1]');
const bool = () => z.boolean({ error: 'must be true or false' });
const oneOf = <T extends string>(values: readonly [T, ...T[]]) =>
  z.enum(values, { error: `must be one of ${values.map((v) => `'${v}'`).join(', ')}` });

/** The schema of a user-supplied config: every field optional, unknown fields rejected. */
export const algoConfigSchema = z.strictObject({
  algo: oneOf(ALGOS as [Algo, ...Algo[]]).default(D.algo),
  groupSize: int().min(1, 'must be ≥ 1').max(1024, 'must be ≤ 1024 (episodes per group)').default(D.groupSize),
  baseline: oneOf(['batch', 'ema']).default(D.baseline),
  baselineDecay: num().min(0, 'must be in [0, 1)').lt(1, 'must be in [0, 1)').default(D.baselineDecay),
  gamma: unit().default(D.gamma),
  lambda: unit().default(D.lambda),
  normalizeStd: bool().optional(),
  stdEps: num().min(1e-12, 'must be ≥ 1e-12 (smaller vanishes in float32 and divides by 0)').max(1, 'must be ≤ 1').default(D.stdEps),
  normalizeAdvantages: bool().default(D.normalizeAdvantages),
  clipLow: num().gt(0, 'must be in (0, 1)').lt(1, 'must be in (0, 1)').default(D.clipLow),
  clipHigh: num().gt(0, 'must be > 0').max(10, 'must be ≤ 10 (a ratio bound above 1 + 10 is no trust region)').default(D.clipHigh),
  klCoef: num().min(0, 'must be ≥ 0').max(100, 'must be ≤ 100').default(D.klCoef),
  klEstimator: oneOf(['k1', 'k3']).default(D.klEstimator),
  klMode: oneOf(['loss', 'reward']).default(D.klMode),
  entropyCoef: num().min(0, 'must be ≥ 0').max(100, 'must be ≤ 100').default(D.entropyCoef),
  aggregation: oneOf(['token', 'sequence', 'constant']).optional(),
  aggregationLen: int().min(1, 'must be ≥ 1 (tokens) or null').max(1_000_000, 'must be ≤ 1,000,000 (tokens) or null').nullable().default(D.aggregationLen),
  dynamicSampling: z
    .strictObject({
      enabled: bool().default(D.dynamicSampling.enabled),
      maxRounds: int().min(1, 'must be ≥ 1').max(64, 'must be ≤ 64 (each round is a full rollout)').default(D.dynamicSampling.maxRounds),
      spreadTol: num().min(0, 'must be ≥ 0').max(1e6, 'must be ≤ 1e6').default(D.dynamicSampling.spreadTol),
    }, { error: 'must be an object' })
    .default({ ...D.dynamicSampling }),
  tis: z
    .strictObject({
      enabled: bool().default(D.tis.enabled),
      cap: num().min(1, 'must be ≥ 1 (a cap below 1 would down-weight on-policy tokens)').max(1e6, 'must be ≤ 1e6').default(D.tis.cap),
    }, { error: 'must be an object' })
    .default({ ...D.tis }),
  rolloutCorrection: rolloutCorrectionSchema,
  rewardAggregation: oneOf(['sum', 'gdpo']).default(D.rewardAggregation),
  lr: num().positive('must be > 0').max(1, 'must be ≤ 1 (Adam moves each weight by about lr per step; above 1 the weights blow up)').default(D.lr),
  adamBeta1: num().min(0, 'must be in [0, 1)').lt(1, 'must be in [0, 1)').default(D.adamBeta1),
  adamBeta2: num().min(0, 'must be in [0, 1)').lt(1, 'must be in [0, 1)').default(D.adamBeta2),
  adamEps: num().min(1e-12, 'must be ≥ 1e-12 (smaller is 0 next to float32 moments, and 0/0 writes NaN into the weights)').max(1, 'must be ≤ 1').default(D.adamEps),
  maxGradNorm: num().positive('must be > 0 or null').max(1e6, 'must be ≤ 1e6 or null').nullable().default(D.maxGradNorm),
  weightDecay: num().min(0, 'must be ≥ 0').max(1, 'must be ≤ 1 (per unit of lr)').default(D.weightDecay),
  valueCoef: num().min(0, 'must be ≥ 0').max(100, 'must be ≤ 100').default(D.valueCoef),
  valueClip: num().positive('must be > 0 or null').max(1e6, 'must be ≤ 1e6 or null').nullable().default(D.valueClip),
  updateEpochs: int().min(1, 'must be ≥ 1').max(64, 'must be ≤ 64 (passes over one batch)').optional(),
  minibatches: int().min(1, 'must be ≥ 1').max(1024, 'must be ≤ 1024').default(D.minibatches),
  stepAdvantageWeight: num().min(0, 'must be ≥ 0').max(10, 'must be ≤ 10 (a weight on a standardised advantage)').default(D.stepAdvantageWeight),
  turnCredit: z
    .strictObject({
      lambda: num().min(0, 'must be ≥ 0').max(10, 'must be ≤ 10 (a weight on a standardised advantage)').default(D.turnCredit.lambda),
      source: oneOf(TURN_REWARD_SOURCES as [TurnRewardSource, ...TurnRewardSource[]]).default(D.turnCredit.source),
    }, { error: 'must be an object' })
    .default({ ...D.turnCredit }),
  sapo: z
    .strictObject({
      tauPos: num().gt(0, 'must be > 0').max(100, 'must be ≤ 100').default(D.sapo.tauPos),
      tauNeg: num().gt(0, 'must be > 0').max(100, 'must be ≤ 100').default(D.sapo.tauNeg),
    }, { error: 'must be an object' })
    .default({ ...D.sapo }),
  covariance: z
    .strictObject({
      mode: oneOf(COVARIANCE_MODES).default(D.covariance.mode),
      clipRatio: num().gt(0, 'must be in (0, 1]').max(1, 'must be in (0, 1]').default(D.covariance.clipRatio),
      lb: num().default(D.covariance.lb),
      ub: num().default(D.covariance.ub),
      klRatio: num().gt(0, 'must be in (0, 1]').max(1, 'must be in (0, 1]').default(D.covariance.klRatio),
      klCoef: num().min(0, 'must be ≥ 0').max(100, 'must be ≤ 100').default(D.covariance.klCoef),
    }, { error: 'must be an object' })
    .default({ ...D.covariance }),
  overlong: z
    .strictObject({
      enabled: bool().optional(),
      buffer: int().min(1, 'must be ≥ 1 (positions)').max(1_000_000, 'must be ≤ 1,000,000 (positions)').default(D.overlong.buffer),
      maxLen: int().min(1, 'must be ≥ 1 (positions) or null').max(1_000_000, 'must be ≤ 1,000,000 (positions) or null').nullable().default(D.overlong.maxLen),
      penalty: num().min(0, 'must be ≥ 0').max(100, 'must be ≤ 100').default(D.overlong.penalty),
    }, { error: 'must be an object' })
    .default({ buffer: D.overlong.buffer, maxLen: D.overlong.maxLen, penalty: D.overlong.penalty }),
  maskTruncated: bool().optional(),
}, { error: 'config must be a JSON object' });

export type AlgoConfigInput = z.input<typeof algoConfigSchema>;

/** One problem with a config: the field's dotted path ('' for the whole object) and a message. */
export interface ConfigIssue {
  path: string;
  message: string;
}

/** Cross-field rules that a per-field schema cannot express. */
export function crossCheck(c: AlgoConfig): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const d = algoDescriptor(c.algo);
  if (d.group && c.groupSize < 2) {
    const why = d.groupOfOne ?? 'a group of one has no spread, so every advantage is 0';
    out.push({ path: 'groupSize', message: `must be ≥ 2 for ${c.algo} (${why}), got ${c.groupSize}` });
  }
  const own = d.check?.(c) ?? [];
  if (c.normalizeStd && !d.groupStd && !own.some((i) => i.path === 'normalizeStd')) {
    out.push({ path: 'normalizeStd', message: `only ${STD_NORMALIZED.join(', ')} divide by the group std (algo is '${c.algo}')` });
  }
  out.push(...own);
  if (c.klCoef > 0 && c.klMode === 'loss' && c.klEstimator === 'k1') {
    out.push({
      path: 'klEstimator',
      message: "k1 as a loss term has a zero-mean gradient on samples from π (it adds only noise); use 'k3' with klMode 'loss', or klMode 'reward' for k1",
    });
  }
  out.push(...correctionIssues(c.rolloutCorrection, c.tis.enabled));
  if (c.rewardAggregation === 'gdpo' && !(d.group && d.advantage.kind === 'episode' && c.normalizeStd)) {
    out.push({ path: 'rewardAggregation', message: `'gdpo' normalises each reward term by its group's std: it needs a group algorithm with episode advantages and normalizeStd on (${STD_NORMALIZED.filter((a) => algoDescriptor(a).advantage.kind === 'episode').join(', ')}); algo is '${c.algo}'${d.groupStd && !c.normalizeStd ? ' with normalizeStd off' : ''}` });
  }
  if (c.rewardAggregation === 'gdpo' && c.klCoef > 0 && c.klMode === 'reward') {
    out.push({ path: 'klMode', message: "'reward' subtracts the KL penalty from the summed reward, which 'gdpo' does not read (it normalises the reward terms); use klMode 'loss'" });
  }
  if (c.covariance.mode === 'clip-cov' && !(c.covariance.lb < c.covariance.ub)) {
    out.push({ path: 'covariance.ub', message: `must be above covariance.lb (${c.covariance.lb}): Clip-Cov picks tokens with lb < cov < ub, got ${c.covariance.ub}` });
  }
  if (c.overlong.enabled && c.overlong.maxLen !== null && c.overlong.buffer > c.overlong.maxLen) {
    out.push({ path: 'overlong.buffer', message: `must be ≤ overlong.maxLen (${c.overlong.maxLen}), got ${c.overlong.buffer}` });
  }
  if (c.dynamicSampling.enabled && !d.group) {
    out.push({ path: 'dynamicSampling.enabled', message: `needs a group algorithm (${GROUP_ALGOS.join(', ')}); algo is '${c.algo}'` });
  }
  return out;
}

function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (typeof v === 'number') return String(v); // NaN and Infinity, which JSON would print as null
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/**
 * Validate and complete a user-supplied config. Messages read `field: what is wrong (got X)`,
 * e.g. `clipHigh: must be > 0 (got -0.1)` or `dynamicSampling.maxRounds: must be an integer (got 2.5)`.
 */
export function parseAlgoConfig(input: unknown): { ok: true; config: AlgoConfig } | { ok: false; issues: ConfigIssue[]; messages: string[] } {
  const r = algoConfigSchema.safeParse(input, { reportInput: true });
  let issues: ConfigIssue[];
  if (!r.success) {
    issues = r.error.issues.flatMap((i): ConfigIssue[] => {
      const path = i.path.map(String).join('.');
      if (i.code === 'unrecognized_keys') {
        return i.keys.map((k) => ({ path: path ? `${path}.${k}` : k, message: 'unknown field (misspelt, or not a setting of this algorithm config)' }));
      }
      return [{ path, message: 'input' in i ? `${i.message} (got ${show(i.input)})` : i.message }];
    });
  } else {
    const d = r.data;
    const config: AlgoConfig = {
      ...defaultsFor(d.algo),
      ...d,
      normalizeStd: d.normalizeStd ?? algoDescriptor(d.algo).groupStd,
      aggregation: d.aggregation ?? defaultAggregation(d.algo),
      updateEpochs: d.updateEpochs ?? algoDescriptor(d.algo).updateEpochs,
      overlong: { ...d.overlong, enabled: d.overlong.enabled ?? algoDescriptor(d.algo).loss.overlong },
      maskTruncated: d.maskTruncated ?? algoDescriptor(d.algo).loss.maskTruncated,
    };
    issues = crossCheck(config);
    if (issues.length === 0) return { ok: true, config };
  }
  return { ok: false, issues, messages: issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)) };
}
