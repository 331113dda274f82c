/**
 * Advantages of tree rollouts (ARPO, Dong et al. 2025; TreePO, Li et al. 2025): a trunk episode
 * is sampled whole, and at some of its turns (right after a tool reply, where the policy was
 * unsure) extra branches continue from the trunk's prefix. Every leaf (the trunk and each branch)
 * is a complete episode with its own outcome and its own group-relative advantage A_leaf. A token
 * of the trunk is shared by every leaf that contains it, so it takes their mean:
 *
 *   A(t) = mean { A_leaf : leaf ∈ {trunk} ∪ {branches b of the trunk with at_b > t} }
 *
 * where branch b copies the trunk's tokens [0, at_b) and samples its own from at_b on (its own
 * tokens take A_b). A branch's copy of the prefix is not trained (its loss mask is 0 there), so
 * the shared tokens are trained once, on the trunk, not once per branch.
 */

/** Branch `branch` continues trunk episode `trunk` from token position `at` (it copies tokens [0, at)). */
export interface BranchLink {
  trunk: number;
  branch: number;
  /** First token position the branch sampled itself (the trunk's first policy token after a tool reply). */
  at: number;
}

/** One stretch of a trunk's token positions [from, to) and the advantage its tokens take. */
export interface PrefixSegment {
  trunk: number;
  from: number;
  to: number;
  advantage: number;
}

/**
 * The trunks' shared stretches and their advantages (see the file comment). Positions at or past
 * a trunk's last branch point keep the trunk's own advantage and are not listed.
 * @param advantages [episodes] each leaf's own advantage, indexed as the links' episode indices.
 */
export function sharedPrefixSegments(links: readonly BranchLink[], advantages: ArrayLike<number>): PrefixSegment[] {
  const byTrunk = new Map<number, BranchLink[]>();
  for (const l of links) {
    if (l.trunk === l.branch) throw new RangeError(`sharedPrefixSegments: episode ${l.trunk} branches from itself`);
    if (!(l.at >= 1)) throw new RangeError(`sharedPrefixSegments: branch ${l.branch} starts at ${l.at}, before any token`);
    (byTrunk.get(l.trunk) ?? byTrunk.set(l.trunk, []).get(l.trunk)!).push(l);
  }
  const out: PrefixSegment[] = [];
  for (const [trunk, ls] of byTrunk) {
    const cuts = [...new Set(ls.map((l) => l.at))].sort((a, b) => a - b);
    let from = 0;
    for (const to of cuts) {
      // Tokens in [from, to) are in the trunk and in every branch that starts at or after `to`.
      const leaves = [advantages[trunk], ...ls.filter((l) => l.at >= to).map((l) => advantages[l.branch])];
      out.push({ trunk, from, to, advantage: leaves.reduce((s, x) => s + x, 0) / leaves.length });
      from = to;
    }
  }
  return out;
}
