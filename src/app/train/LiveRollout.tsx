/**
 * Live rollout: while training runs, one episode of the latest batch is replayed on the map at
 * LIVE_FPS (≤ 4 frames/s), then the next batch's. Grid runs only. Behind the "render during
 * training" toggle: off, this component draws nothing and runs no timer (zero cost).
 *
 * Frames come from stepping a live env with the recorded actions (env, seed, actions are
 * deterministic), a few steps per frame: long episodes play at several steps per frame so one
 * takes at most LIVE_FRAMES_PER_EPISODE frames, and no frame does more than O(stride) env work
 * plus one small canvas paint (no long task, even on a loaded machine).
 */
import { memo, useCallback, useEffect, useRef, useState } from 'react';
import { makeEnv, type Env } from '../../core/envs/index.ts';
import type { Frame } from '../../core/envs/types.ts';
import type { GridEpisodeView } from '../../runtime/trainWorker/types.ts';
import { paintGridFrame } from '../env/gridPaint.ts';
import { useStore } from '../store.ts';
import { PixelCanvas } from '../ui/PixelCanvas.tsx';

/** Frames per second of the live replay (the throttle: at most 4). */
export const LIVE_FPS = 4;
const SIZE = 150;

function pickEpisode(episodes: readonly { kind: string }[], iteration: number): number {
  // Rotate through the batch, so successive batches show different rollouts.
  return episodes.length ? (iteration * 7) % episodes.length : -1;
}

/** Frames one episode may take: long episodes (hundreds of steps) advance several steps per frame. */
export const LIVE_FRAMES_PER_EPISODE = 16;

/** Env steps per frame so an episode of T steps plays in at most LIVE_FRAMES_PER_EPISODE frames. */
export function liveStride(T: number): number {
  return Math.max(1, Math.ceil(T / LIVE_FRAMES_PER_EPISODE));
}

interface Playing {
  ep: GridEpisodeView;
  iteration: number;
  index: number;
  env: Env;
  /** Steps applied so far. */
  t: number;
  frame: Frame;
}

const Player = memo(function Player() {
  const config = useStore((s) => s.running ?? s.draft);
  const [view, setView] = useState<{ frame: Frame; t: number; T: number; stride: number; iteration: number; index: number; ep: GridEpisodeView } | null>(null);
  const playing = useRef<Playing | null>(null);
  const envId = config.env.id;
  const kwargs = config.env.kwargs;

  // One timer at LIVE_FPS. Each tick applies `stride` recorded actions to a live env (O(stride)
  // work, no whole-episode replay), or, once the episode is over, adopts the newest batch.
  useEffect(() => {
    const tick = () => {
      const t0 = performance.now();
      advance();
      // A user-timing entry per frame (the e2e test reads the worst one).
      performance.measure('live-rollout-frame', { start: t0, end: performance.now() });
    };
    const advance = () => {
      let p = playing.current;
      const latest = useStore.getState().latest;
      // A finished episode gives way to the newest batch; so does one two or more batches behind
      // (training outpaces the replay), so the card never shows stale behaviour for long.
      if (latest && (!p || (latest.iteration !== p.iteration && (p.t >= p.ep.actions.length || latest.iteration - p.iteration >= 2)))) {
        const index = pickEpisode(latest.episodes, latest.iteration);
        const ep = latest.episodes[index];
        if (ep && ep.kind === 'grid') {
          try {
            const env = makeEnv(envId, kwargs ?? {});
            env.reset({ seed: ep.seed });
            p = playing.current = { ep, iteration: latest.iteration, index, env, t: 0, frame: env.frame() };
          } catch {
            return;
          }
        }
      } else if (p && p.t < p.ep.actions.length) {
        const T = p.ep.actions.length;
        for (let k = 0; k < liveStride(T) && p.t < T; k++) {
          const r = p.env.step(p.ep.actions[p.t++]);
          if (r.terminated || r.truncated) p.t = T;
        }
        p.frame = p.env.frame();
      } else return;
      if (p) setView({ frame: p.frame, t: p.t, T: p.ep.actions.length, stride: liveStride(p.ep.actions.length), iteration: p.iteration, index: p.index, ep: p.ep });
    };
    tick();
    const id = setInterval(tick, 1000 / LIVE_FPS);
    return () => clearInterval(id);
  }, [envId, kwargs]);

  const frame = view?.frame ?? null;
  const grid = frame?.kind === 'grid' ? frame : null;
  const s = grid ? Math.floor(Math.min(SIZE / grid.width, SIZE / grid.height)) : 1;
  const paint = useCallback((ctx: CanvasRenderingContext2D) => grid && paintGridFrame(ctx, grid, s), [grid, s]);
  if (!view || !frame) return <div className="live-empty muted small">Waiting for the first batch…</div>;
  const { ep, t, T } = view;
  const done = t >= T;
  return (
    <div className="live-body" data-testid="live-rollout" data-iteration={view.iteration + 1} data-step={t}>
      {grid ? (
        <PixelCanvas width={grid.width * s} height={grid.height * s} paint={paint} label="A rollout of the latest batch, replayed live" className="live-map" />
      ) : (
        // A vector env (code env with a Box observation) has no picture: its latest observation, as text.
        <p className="live-map small" data-testid="live-vector">{frame.kind === 'transcript' ? frame.messages[frame.messages.length - 1]?.text : ''}</p>
      )}
      <div className="live-facts small">
        <div>
          iteration <b>{view.iteration + 1}</b>, episode {view.index + 1}
        </div>
        <div>
          step <b>{t}</b> / {T}
          {view.stride > 1 && <span className="muted"> · {view.stride} steps per frame</span>}
        </div>
        {done && <span className={`chip ${ep.success ? 'chip-good' : ep.truncated ? 'chip-warn' : 'chip-bad'}`}>{ep.success ? 'goal reached' : ep.truncated ? 'truncated' : 'failed'}</span>}
      </div>
    </div>
  );
});

export function LiveRollout() {
  const on = useStore((s) => s.renderLive);
  const setOn = useStore((s) => s.setRenderLive);
  return (
    <figure className="chart live-card" data-testid="live-card" data-on={on}>
      <figcaption className="chart-head">
        <span className="chart-title">Live rollout</span>
        <label className="small live-toggle" title="Draw one rollout of each new batch while training (≤ 4 frames/s). Off: nothing is drawn and nothing is computed.">
          <input type="checkbox" checked={on} data-testid="render-live" onChange={(e) => setOn(e.target.checked)} /> render during training
        </label>
      </figcaption>
      {on ? <Player /> : <div className="live-empty muted small">Off: nothing is drawn (no cost to training).</div>}
    </figure>
  );
}
