/**
 * Tree rollouts for token episodes, in the style of ARPO (Dong et al. 2025, "Agentic Reinforced
 * Policy Optimization": branch partial rollouts where the token entropy rises after a tool call)
 * and TreePO (Li et al. 2025: segments of a shared prefix sampled once, continuations branched).
 *
 * A round first samples its episodes whole (the trunks). Branch points of a trunk are the first
 * policy token of each turn after a tool reply (the env replied to the previous action) whose
 * sampling distribution had entropy above `entropyThreshold` nats; at most `maxPoints` per trunk,
 * the highest-entropy ones. From each point, `branches` extra episodes continue the trunk's prefix:
 * a fresh env is reset with the trunk's seed and the prefix's actions are replayed on it, which
 * reproduces the env's state (the tool envs are deterministic given the seed and the actions;
 * `resumeRecord` checks every replayed reply against the trunk's), and the decoder samples the
 * rest. A branch's copy of the prefix is marked as context (loss mask 0): the prefix is trained
 * once, on the trunk, with the mean advantage of the leaves that share it (algos/treeAdvantages.ts).
 */
import type { ToolEnv } from '../envs/types.ts';
import type { TokenDecoder } from '../models/runners.ts';
import type { Rng } from '../util/rng.ts';
import { collectTokenEpisodes } from './tokenLockstep.ts';
import { startEpisode, type EpisodeRecord, type TokenEpisode } from './tokenEpisode.ts';

export interface TreeRolloutConfig {
  /** Branch extra partial rollouts at uncertain turns after tool replies (off: every episode is sampled whole, alone). */
  enabled: boolean;
  /** Branch where the entropy of the first token's distribution after a tool reply exceeds this, in nats (ln 2 ≈ 0.69 = a coin flip). */
  entropyThreshold: number;
  /** Extra episodes started from each branch point (each a leaf of its own). */
  branches: number;
  /** Most branch points per trunk episode (its highest-entropy ones), which bounds the extra rollouts at maxPoints × branches. */
  maxPoints: number;
}

export const DEFAULT_TREE_ROLLOUT: TreeRolloutConfig = { enabled: false, entropyThreshold: 1, branches: 2, maxPoints: 1 };

/**
 * A trunk's branch points: positions of the first policy token of every turn that follows an env
 * reply (not the first turn, which follows the task) with entropy > threshold; the `maxPoints`
 * highest, in position order.
 */
export function branchPoints(ep: Pick<TokenEpisode, 'lossMask' | 'entropies'>, cfg: Pick<TreeRolloutConfig, 'entropyThreshold' | 'maxPoints'>): number[] {
  const starts: number[] = [];
  let seenAction = false;
  for (let i = 1; i < ep.lossMask.length; i++) {
    if (ep.lossMask[i] !== 1 || ep.lossMask[i - 1] === 1) continue;
    if (seenAction && ep.entropies[i] > cfg.entropyThreshold) starts.push(i);
    seenAction = true;
  }
  return starts
    .sort((a, b) => ep.entropies[b] - ep.entropies[a] || a - b)
    .slice(0, cfg.maxPoints)
    .sort((a, b) => a - b);
}

/** Actions of `ep` that end before token position `at` (the turns a branch from `at` replays). */
function actionsBefore(ep: Pick<TokenEpisode, 'lossMask'>, at: number): number {
  let n = 0;
  for (let i = 1; i < at; i++) if (ep.lossMask[i] === 1 && ep.lossMask[i + 1] !== 1) n++;
  return n;
}

/**
 * The record a branch from `at` starts with: `env` reset with the trunk's seed and the trunk's
 * first actions replayed on it, the context the trunk's tokens [0, at), all of them context
 * (mask 0). Throws when a replayed reply differs from the trunk's (the env is not deterministic).
 */
export function resumeRecord(env: ToolEnv, trunk: Pick<TokenEpisode, 'seed' | 'tokens' | 'lossMask' | 'actions' | 'observations'>, at: number): EpisodeRecord {
  const r = startEpisode(env.reset({ seed: trunk.seed }).obs.text);
  if (r.observations[0] !== trunk.observations[0]) throw new Error(`resumeRecord: seed ${trunk.seed} reset to a different task than the trunk's`);
  const k = actionsBefore(trunk, at);
  for (let t = 0; t < k; t++) {
    const res = env.step(trunk.actions[t]);
    r.actions.push(trunk.actions[t]);
    r.rewards.push(res.reward);
    r.infos.push(res.info);
    r.observations.push(res.obs.text);
    if (res.obs.text !== trunk.observations[t + 1]) throw new Error(`resumeRecord: replaying seed ${trunk.seed}, turn ${t + 1} replied ${JSON.stringify(res.obs.text)}, the trunk saw ${JSON.stringify(trunk.observations[t + 1])}`);
    if (res.terminated || res.truncated) throw new Error(`resumeRecord: replaying seed ${trunk.seed}, the episode ended at turn ${t + 1}, before the branch point`);
  }
  r.ctx = Array.from(trunk.tokens.subarray(0, at));
  r.mask = r.ctx.map(() => 0);
  r.logp = r.ctx.map(() => 0);
  r.ent = r.ctx.map(() => 0);
  r.ver = r.ctx.map(() => -1);
  return r;
}

export interface Branches {
  /** The branch episodes, each a complete leaf. */
  episodes: TokenEpisode[];
  /** Per branch: its trunk (index into the trunks given) and the token position it starts at. */
  from: { trunk: number; at: number }[];
  envSteps: number;
  policyTokens: number;
}

/**
 * Samples the branches of `trunks` on the decoder (its rows in chunks; a short last chunk is
 * padded with copies of its first branch, whose results are dropped). Returns no branches when no
 * trunk has a branch point.
 */
export async function growBranches(
  trunks: readonly TokenEpisode[],
  // constrained: decode the branches under the action grammar's masks as the trunks were, so a
  // branch's actions are drawn from the same (masked) policy and its masks are recorded for the learner.
  o: { envs: readonly ToolEnv[]; decoder: TokenDecoder; rng: Rng; temperature: number; maxActionTokens: number; constrained?: boolean; tree: TreeRolloutConfig },
): Promise<Branches> {
  const plan: { trunk: number; at: number }[] = [];
  trunks.forEach((ep, i) => {
    for (const at of branchPoints(ep, o.tree)) for (let b = 0; b < o.tree.branches; b++) plan.push({ trunk: i, at });
  });
  const out: Branches = { episodes: [], from: [], envSteps: 0, policyTokens: 0 };
  const B = o.envs.length;
  for (let c = 0; c < plan.length; c += B) {
    const chunk = plan.slice(c, c + B);
    const rows = Array.from({ length: B }, (_, i) => chunk[i] ?? chunk[0]);
    const prefixes = rows.map((p, i) => resumeRecord(o.envs[i], trunks[p.trunk], p.at));
    const ro = await collectTokenEpisodes({
      envs: o.envs,
      seeds: rows.map((p) => trunks[p.trunk].seed),
      groups: rows.map((p) => trunks[p.trunk].group),
      decoder: o.decoder,
      rng: o.rng,
      temperature: o.temperature,
      maxActionTokens: o.maxActionTokens,
      constrained: o.constrained,
      prefixes,
    });
    out.episodes.push(...ro.episodes.slice(0, chunk.length));
    out.from.push(...chunk);
    out.envSteps += ro.envSteps;
    out.policyTokens += ro.policyTokens;
  }
  return out;
}
