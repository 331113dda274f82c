/**
 * Reward-code hashes for the Runs view: rewardCodeHash (core/reward/versions.ts, SHA-256 via
 * Web Crypto) is asynchronous, so the view asks this hook, which answers from a cache and
 * re-renders once a new code's hash is known. The CLI prints the same hash for the same code.
 */
import { useEffect, useState } from 'react';
import { rewardCodeHash } from '../../core/reward/versions.ts';

/** code → its hash (null for no code); the same code appears in many runs. */
const cache = new Map<string, string | null>();

/** The hash of each code, in order: undefined while it is being computed. */
export function useCodeHashes(codes: readonly string[]): (string | null | undefined)[] {
  const [, setTick] = useState(0);
  const key = codes.join('\u0000');
  useEffect(() => {
    const missing = [...new Set(codes)].filter((c) => !cache.has(c));
    if (missing.length === 0) return;
    let live = true;
    void Promise.all(missing.map(async (c) => cache.set(c, await rewardCodeHash(c)))).then(() => {
      if (live) setTick((t) => t + 1);
    });
    return () => {
      live = false;
    };
    // `key` stands for `codes` (a new array each render).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  return codes.map((c) => cache.get(c));
}
