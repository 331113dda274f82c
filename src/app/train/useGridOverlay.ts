/**
 * Fetches a value/policy overlay for one step of a grid episode from the training worker, at a
 * throttled rate: after the person stops scrubbing (debounce), and while training runs at most
 * once per OVERLAY_REFRESH_MS as new weights arrive. The worker does all the work (env replay,
 * features, one batched policy call); the main thread only receives ≤ a few hundred floats.
 */
import { useEffect, useRef, useState } from 'react';
import type { GridEpisodeView, GridOverlay } from '../../runtime/trainWorker/types.ts';
import { useStore } from '../store.ts';
import { currentTrainWorker } from './client.ts';

/** Least time between overlay refreshes caused by new iterations (ms). */
export const OVERLAY_REFRESH_MS = 1000;
/** Wait after a scrub before asking (ms): dragging the slider asks once, at the end. */
const DEBOUNCE_MS = 120;

/** `available`: a run exists in the worker to compute with (otherwise no overlay will come). */
export function useGridOverlay(ep: GridEpisodeView, step: number, enabled: boolean): { overlay: GridOverlay | null; pending: boolean; available: boolean } {
  const [overlay, setOverlay] = useState<GridOverlay | null>(null);
  const [pending, setPending] = useState(false);
  const hasRun = useStore((s) => s.running !== null && s.info !== null);
  const iteration = useStore((s) => s.latest?.iteration ?? -1);
  // New weights each iteration: refresh, but no more often than OVERLAY_REFRESH_MS.
  const [tick, setTick] = useState(iteration);
  const last = useRef(0);
  useEffect(() => {
    if (iteration === tick) return;
    const wait = Math.max(0, last.current + OVERLAY_REFRESH_MS - performance.now());
    const id = setTimeout(() => setTick(iteration), wait);
    return () => clearTimeout(id);
  }, [iteration, tick]);

  useEffect(() => {
    if (!enabled || !hasRun) return;
    let live = true;
    const id = setTimeout(() => {
      const w = currentTrainWorker();
      if (!w) return;
      last.current = performance.now();
      setPending(true);
      w.gridOverlay({ seed: ep.seed, actions: Int32Array.from(ep.actions), step })
        .then((o) => {
          if (live) setOverlay(o);
        })
        .catch(() => {
          if (live) setOverlay(null);
        })
        .finally(() => {
          if (live) setPending(false);
        });
    }, DEBOUNCE_MS);
    return () => {
      live = false;
      clearTimeout(id);
    };
  }, [ep, step, enabled, hasRun, tick]);

  return { overlay: enabled && hasRun ? overlay : null, pending, available: hasRun };
}
