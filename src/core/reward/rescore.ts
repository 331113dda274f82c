/**
 * Counterfactual re-scoring (the reward lab's "what would this edit change"): a frozen buffer of finished
 * episodes is scored again with edited reward terms, without training, to show what the edit
 * would change: each term's distribution before and after, per-episode returns, advantages and
 * how many flip sign, and which episodes move most.
 *
 * The pure half lives here. The runtime half (replaying each episode from its seed into step
 * records and scoring them in the QuickJS sandbox, off the page's thread) is
 * runtime/rewardSandbox/rescore.ts.
 *
 * What changes and what does not: an episode's shaped return is
 *   total = Σ env reward + Σ built-in shaping terms + Σ user terms (+ the KL penalty in reward),
 * and an edit only swaps the user terms, so
 *   newTotal = total − Σ old user terms + Σ new user terms,
 * everything else (the episodes' actions, the shaping weights, the KL term) held fixed.
 * Advantages are recomputed from the totals with the run's own estimator (algos/advantages.ts),
 * old and new alike, so both sides of a comparison come from the same formula.
 */
import { stepGae } from '../algos/gae.ts';
import { algoDescriptor, sequenceAdvantages } from '../algos/registry/index.ts';
import { DEFAULT_ALGO_CONFIG, type AlgoConfig } from '../algos/config.ts';
import { mean, std } from '../algos/stats.ts';
import type { Info } from '../envs/types.ts';

/**
 * What a token episode (a tool env, or a grid played as text) recorded for its user terms: its
 * step records are read off these, never replayed (rollout/tokenEpisode.ts, reward/stepRecord.ts).
 */
export interface FrozenText {
  /** [turns] action texts as the env received them. */
  actions: string[];
  /** [turns] the env's info after each action. */
  infos: Info[];
  /** [turns + 1] the task, then the env's reply after each action. */
  observations: string[];
  terminated: boolean;
  truncated: boolean;
  /** Policy tokens sampled (the loss positions its advantage was broadcast onto). */
  policyTokens: number;
}

/** One frozen episode: what replays it (env + seed + actions) and what the run scored it. */
export interface FrozenEpisode {
  /** The iteration (0-based) whose batch it came from: advantages compare within a batch. */
  iteration: number;
  /** Its index in that batch's episode list (what the trajectory inspector opens). */
  index: number;
  /** Reset seed. */
  seed: number;
  /** GRPO-style group within the batch (−1 for algorithms without groups). */
  group: number;
  /** [T] action indices of a grid episode; [] for a token episode (see `text`). */
  actions: number[];
  /** [T] the env's reward per step, or per turn of a token episode (a grid replay is checked against it). */
  rewards: number[];
  /** A token episode's record (absent for grid episodes, which replay from seed + actions). */
  text?: FrozenText;
  /** The shaped return the run's advantage compared (env + shaping + the old user terms). */
  total: number;
  /** The advantage the run used (PPO: its first step's, before batch normalisation). */
  advantage: number;
  success: boolean;
}

/** Per episode, per term, the term's value at each step ([T] each); terms in source order. */
export interface TermValues {
  terms: readonly string[];
  /** [n episodes] of term → [T]. */
  values: readonly Readonly<Record<string, ArrayLike<number>>>[];
}

/** Five-number summary plus mean and std (sample, N−1) of a set of values. */
export interface Summary {
  n: number;
  mean: number;
  std: number;
  min: number;
  q1: number;
  median: number;
  q3: number;
  max: number;
}

/** Before and after histograms of one quantity over the buffer, on shared bins. */
export interface Distribution {
  /** The term's name, or 'return' for the shaped return. */
  name: string;
  /** [bins + 1] ascending bin edges, shared by both sides. */
  edges: number[];
  /** Counts per bin before the edit; null when the quantity did not exist before (a new term). */
  before: number[] | null;
  /** Counts per bin after the edit; null for a term the edit removed. */
  after: number[] | null;
  beforeSummary: Summary | null;
  afterSummary: Summary | null;
}

/** One episode's scores, old and new. */
export interface RescoredEpisode {
  oldReturn: number;
  newReturn: number;
  /** Advantage under the old terms, recomputed with the run's estimator. */
  oldAdv: number;
  newAdv: number;
  /** The advantage changed sign (old · new < 0): training would push this episode the other way. */
  flip: boolean;
}

export interface RescoreResult {
  n: number;
  /** How advantages were recomputed, or why they were not. */
  advantageNote: string;
  episodes: RescoredEpisode[];
  /** Episodes whose advantage flipped sign. */
  flips: number;
  /** Episodes whose return changed (|Δ| > 1e-12). */
  changed: number;
  /** One per term in either version (old terms first, in source order, then new ones), then 'return'. */
  distributions: Distribution[];
  /** Indices into `episodes`, most moved first: by |Δ advantage|, then |Δ return|; at most `top`. */
  moved: number[];
}

/** Quantile q in [0, 1] of ascending `sorted` by linear interpolation (numpy's default). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function summarize(xs: readonly number[]): Summary {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, mean: mean(s), std: std(s), min: s[0] ?? NaN, q1: quantile(s, 0.25), median: quantile(s, 0.5), q3: quantile(s, 0.75), max: s[s.length - 1] ?? NaN };
}

/**
 * Histograms of `before` and `after` on `bins` equal-width bins spanning both (a single value
 * gets one bin of width 1 around it). A value on an inner edge counts in the bin above it; the
 * maximum counts in the last bin.
 */
export function histograms(name: string, before: readonly number[] | null, after: readonly number[] | null, bins = 12): Distribution {
  const all = [...(before ?? []), ...(after ?? [])];
  let lo = Math.min(...all);
  let hi = Math.max(...all);
  if (all.length === 0) [lo, hi] = [0, 1];
  if (hi - lo < 1e-12) [lo, hi] = [lo - 0.5, hi + 0.5];
  const w = (hi - lo) / bins;
  const edges = Array.from({ length: bins + 1 }, (_, i) => (i === bins ? hi : lo + i * w));
  const count = (xs: readonly number[] | null) => {
    if (!xs) return null;
    const c = new Array<number>(bins).fill(0);
    for (const x of xs) c[Math.min(bins - 1, Math.max(0, Math.floor((x - lo) / w)))]++;
    return c;
  };
  return { name, edges, before: count(before), after: count(after), beforeSummary: before ? summarize(before) : null, afterSummary: after ? summarize(after) : null };
}

/** Env steps of an episode: grid steps, or a token episode's turns (PPO's GAE discounts per turn). */
const stepsOf = (ep: { actions: readonly number[]; text?: FrozenText }) => (ep.text ? ep.text.actions.length : ep.actions.length);

/** Loss positions of an episode: grid steps, or a token episode's policy tokens. */
const positionsOf = (ep: { actions: readonly number[]; text?: FrozenText }) => (ep.text ? ep.text.policyTokens : ep.actions.length);

const sumOf = (v: ArrayLike<number> | undefined) => {
  let s = 0;
  if (v) for (let i = 0; i < v.length; i++) s += v[i];
  return s;
};

/** Algorithm fields the estimators read. */
export type RescoreAlgo = Pick<AlgoConfig, 'algo' | 'groupSize' | 'normalizeStd' | 'stdEps' | 'baseline' | 'baselineDecay' | 'gamma' | 'lambda'>;

/**
 * Per-episode advantages of `totals` with the run's sequence-level estimator, batch by batch: a
 * batch is the episodes of one iteration, split into its `group` indices (group −1, from
 * algorithms without groups, is the whole batch), so a buffer holding part of a batch still gets
 * its groups' math, and a batch-wide step (REINFORCE++'s normalisation over the batch's steps,
 * each episode weighing its steps, or its policy tokens on a token episode) sees the batch. REINFORCE's EMA baseline is not
 * replayed: its first-batch form (the batch mean) is used. GiGPO: its episode-level part (GRPO's).
 * A group the estimator cannot score (RLOO's group of one) gets 0, the rest of its batch group by group.
 */
export function groupAdvantages(algo: RescoreAlgo, episodes: readonly (Pick<FrozenEpisode, 'iteration' | 'group'> & { actions?: readonly number[]; text?: FrozenText })[], totals: ArrayLike<number>): Float64Array {
  const out = new Float64Array(episodes.length);
  const batches = new Map<number, Map<number, number[]>>();
  episodes.forEach((ep, i) => {
    const groups = batches.get(ep.iteration) ?? new Map<number, number[]>();
    batches.set(ep.iteration, groups);
    const g = groups.get(ep.group);
    if (g) g.push(i);
    else groups.set(ep.group, [i]);
  });
  // The fields a frozen buffer does not record are not read by episode-level estimators.
  const est = { ...DEFAULT_ALGO_CONFIG, ...algo };
  const score = (idx: readonly number[], sizes: readonly number[]): ArrayLike<number> => {
    const positions = episodes.every((ep) => ep.actions || ep.text) ? idx.map((i) => positionsOf({ actions: episodes[i].actions ?? [], text: episodes[i].text })) : undefined;
    return sequenceAdvantages(est, idx.map((i) => totals[i]), undefined, positions, sizes, true).advantages;
  };
  for (const groups of batches.values()) {
    const members = [...groups.values()];
    const idx = members.flat();
    let adv: ArrayLike<number>;
    try {
      adv = score(idx, members.map((g) => g.length));
    } catch {
      adv = members.flatMap((g) => {
        try {
          return Array.from(score(g, [g.length]));
        } catch {
          return g.map(() => 0);
        }
      });
    }
    idx.forEach((i, k) => (out[i] = adv[k]));
  }
  return out;
}

/**
 * Re-scores a frozen buffer: `before` are the values of the terms that scored it (the run's
 * current code; empty terms for a run without code), `after` those of the edited code, both
 * [n] in `episodes`' order. `top`: how many of the most moved episodes to list.
 *
 * Advantages: sequence-level algorithms recompute both sides from the totals (groupAdvantages).
 * PPO's episode advantage (GAE at step 0) is linear in the step rewards with the values fixed,
 * so its new value is the recorded one plus Σ_t (γλ)^t Δr_t (the terms' per-step change). On a
 * token episode t counts turns: token GAE discounts only across turn boundaries (algos/gae.ts),
 * so the first policy token's advantage moves by the same sum over turns.
 */
export function rescoreBuffer(algo: RescoreAlgo, episodes: readonly FrozenEpisode[], before: TermValues, after: TermValues, top = 10): RescoreResult {
  const n = episodes.length;
  if (before.values.length !== n || after.values.length !== n) throw new RangeError(`rescoreBuffer: ${n} episodes, ${before.values.length} scored before and ${after.values.length} after`);
  const oldSums = before.terms.map((t) => before.values.map((v) => sumOf(v[t])));
  const newSums = after.terms.map((t) => after.values.map((v) => sumOf(v[t])));
  const oldReturn = episodes.map((ep) => ep.total);
  // total + (Σ new − Σ old): an edit that leaves an episode's terms as they were leaves its return
  // bit-for-bit (total − Σ old + Σ new would round, and could split a group of equal returns).
  const newReturn = episodes.map((ep, i) => ep.total + (after.terms.reduce((s, _, k) => s + newSums[k][i], 0) - before.terms.reduce((s, _, k) => s + oldSums[k][i], 0)));

  let oldAdv: ArrayLike<number>;
  let newAdv: ArrayLike<number>;
  let advantageNote: string;
  const kind = algoDescriptor(algo.algo).advantage.kind;
  if (kind === 'gae') {
    oldAdv = episodes.map((ep) => ep.advantage);
    newAdv = episodes.map((ep, i) => {
      const T = stepsOf(ep);
      const delta = new Float64Array(T);
      for (const t of after.terms) for (let s = 0; s < T; s++) delta[s] += after.values[i][t]?.[s] ?? 0;
      for (const t of before.terms) for (let s = 0; s < T; s++) delta[s] -= before.values[i][t]?.[s] ?? 0;
      // GAE with zero values over Δr is Σ (γλ)^t Δr_t at step 0: the change the values do not see.
      const g = stepGae(delta, new Float64Array(T), 0, algo.gamma, algo.lambda);
      return ep.advantage + (g.advantages[0] ?? 0);
    });
    advantageNote = `PPO: each episode's first-step GAE advantage (γ ${algo.gamma}, λ ${algo.lambda}) with the critic's values held fixed, before batch normalisation`;
  } else if (kind === 'greedy-baseline') {
    // The greedy baseline episodes are not in the frozen buffer: their reward is held at its old
    // value, so each advantage moves by exactly its return's change.
    oldAdv = episodes.map((ep) => ep.advantage);
    newAdv = episodes.map((ep, i) => ep.advantage + (newReturn[i] - oldReturn[i]));
    advantageNote = "ReMax: return minus its group's greedy-episode reward, that reward held at its old value (the greedy episodes are not frozen)";
  } else {
    oldAdv = groupAdvantages(algo, episodes, oldReturn);
    newAdv = groupAdvantages(algo, episodes, newReturn);
    advantageNote =
      !algoDescriptor(algo.algo).group
        ? 'REINFORCE: return minus the mean return of its batch'
        : `${algo.algo.toUpperCase()}: group-relative, within each batch's groups${kind === 'step-groups' || kind === 'turn-credit' ? ' (the episode-level part only)' : ''}`;
  }

  const rescored: RescoredEpisode[] = episodes.map((_, i) => ({ oldReturn: oldReturn[i], newReturn: newReturn[i], oldAdv: oldAdv[i], newAdv: newAdv[i], flip: oldAdv[i] * newAdv[i] < 0 }));
  const flips = rescored.filter((e) => e.flip).length;
  const changed = rescored.filter((e) => Math.abs(e.newReturn - e.oldReturn) > 1e-12).length;

  const distributions: Distribution[] = [];
  before.terms.forEach((t, k) => {
    const j = after.terms.indexOf(t);
    distributions.push(histograms(t, oldSums[k], j >= 0 ? newSums[j] : null));
  });
  after.terms.forEach((t, j) => {
    if (!before.terms.includes(t)) distributions.push(histograms(t, null, newSums[j]));
  });
  distributions.push(histograms('return', oldReturn, newReturn));

  const moved = rescored
    .map((e, i) => ({ i, da: Math.abs(e.newAdv - e.oldAdv), dr: Math.abs(e.newReturn - e.oldReturn) }))
    .filter((m) => m.da > 1e-12 || m.dr > 1e-12)
    .sort((a, b) => b.da - a.da || b.dr - a.dr || a.i - b.i)
    .slice(0, top)
    .map((m) => m.i);
  return { n, advantageNote, episodes: rescored, flips, changed, distributions, moved };
}
