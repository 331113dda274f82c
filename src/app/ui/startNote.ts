/**
 * What an empty chart says while a run starts: the imitation warm start's step, or the start's
 * phase with its elapsed time ("loading the engine · 1.2 s"), so a Start is never answered by
 * "Press Start" while the engine loads, the sessions build and the first rollout plays.
 */
import { useEffect, useState } from 'react';
import { useStore } from '../store.ts';
import type { Store } from '../storeTypes.ts';

const PHASE_TEXT: Record<NonNullable<Store['phase']>['name'], string> = {
  engine: 'loading the engine',
  session: 'building the session',
  rollout: 'first rollout',
  update: 'first update',
};

/** What an RL chart says instead of "Press Start" while the imitation warm start runs. */
export function warmEmptyNote(warm: { step: number; total: number } | null): string | undefined {
  return warm ? `RL begins after the warm start (step ${warm.step} / ${warm.total}).` : undefined;
}

/** "building the session · 0.4 s", "first rollout · 37 of 64 episodes · 2.1 s" (`now`, `phase.since`: page time, ms). */
export function phaseNote(phase: Store['phase'], now: number): string | undefined {
  if (!phase) return undefined;
  const episodes = phase.done !== undefined && phase.total !== undefined ? ` · ${phase.done} of ${phase.total} episodes` : '';
  return `${PHASE_TEXT[phase.name]}${episodes} · ${(Math.max(0, now - phase.since) / 1000).toFixed(1)} s`;
}

/** How often the elapsed time is redrawn while a start is under way, ms. */
const TICK_MS = 200;

/**
 * The empty charts' note for the current start (undefined when nothing starts: "Press Start").
 * The phase stays set after the first iteration until the run rests, so a chart whose deferred
 * data is still empty for a frame keeps showing it rather than flashing "Press Start"; the clock
 * stops once the history has a point.
 */
export function useStartNote(): string | undefined {
  const warm = useStore((s) => s.warmStart);
  const phase = useStore((s) => s.phase);
  const ticking = useStore((s) => s.phase !== null && s.history.length === 0);
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    if (!ticking) return;
    const t = setInterval(() => setNow(performance.now()), TICK_MS);
    return () => clearInterval(t);
  }, [ticking]);
  return warmEmptyNote(warm) ?? phaseNote(phase, now);
}
