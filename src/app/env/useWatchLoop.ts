/**
 * The "Watch a trained agent" loop both agent panels share: while `watching`, call `step` at
 * the store's play rate (steps per second) on the episode in view. A new seed, another env, a
 * step that fails or the episode's end stops it (`stop`).
 */
import { useEffect } from 'react';
import { isOver } from '../state/episode.ts';
import { useStore } from '../store.ts';

/**
 * `step` is read once per watch (it reads the agent and mode through refs and the store), and
 * the loop restarts only on `watching` and `agent`: restarting on the others would double-step.
 */
export function useWatchLoop(watching: boolean, agent: unknown, step: () => Promise<boolean>, stop: () => void): void {
  useEffect(() => {
    if (!watching) return;
    let cancelled = false;
    let timer: number | undefined;
    const start = { envId: useStore.getState().envId, seed: useStore.getState().episode?.seed };
    const tick = async () => {
      const s0 = useStore.getState();
      const ok = s0.envId === start.envId && s0.episode?.seed === start.seed && (await step());
      const ep = useStore.getState().episode;
      if (cancelled) return;
      if (!ok || !ep || isOver(ep)) {
        stop();
        return;
      }
      timer = window.setTimeout(() => void tick(), 1000 / useStore.getState().playRate);
    };
    void tick();
    return () => {
      cancelled = true;
      window.clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [watching, agent]);
}
