/**
 * Trajectory inspector: pick a sampled episode, scrub it step by step. Token (tool-env) episodes
 * go to TokenReplay (a token-coloured transcript). For grid episodes the map
 * and the agent's own view are replayed from the env's seed and the recorded actions; beside
 * them, what the policy did at that step (action, probability, entropy, version) and what the
 * update made of it (advantage). A strip over all steps colours each by log-prob or entropy.
 */
import { useCallback, useMemo, useState } from 'react';
import type { GridFrame } from '../../core/envs/types.ts';
import type { EpisodeView, GridEpisodeView, GridOverlay } from '../../runtime/trainWorker/types.ts';
import { egoViewSize, paintAgent, paintEgoView, paintGridFrame } from '../env/gridPaint.ts';
import { useStore } from '../store.ts';
import { PixelCanvas } from '../ui/PixelCanvas.tsx';
import { fmt } from '../ui/MetricChart.tsx';
import { replayGrid } from './replay.ts';
import { cellIndex, HEADINGS, rowOf, valueColor, valueRange, type Facing } from './overlay.ts';
import { paintOverlay } from './overlayPaint.ts';
import { useGridOverlay } from './useGridOverlay.ts';
import { TokenReplay } from './TokenReplay.tsx';
import { ReplayControls, Scrubber } from '../ui/Scrubber.tsx';
import { LossLens } from './LossLens.tsx';
import { usePlayback } from '../ui/usePlayback.ts';
import { GridEpisodeSummary, StepFacts, StepStrip, type StripBy } from './GridReplayParts.tsx';

interface MapOverlay {
  ov: GridOverlay;
  dir: number;
  labels: readonly string[];
  show: { value: boolean; policy: boolean };
}

/** One line under the map: the overlay's numbers at the hovered cell (all action probabilities). */
function CellReadout({ overlay, cell }: { overlay: MapOverlay; cell: { x: number; y: number } | null }) {
  const c = cell ? cellIndex(overlay.ov, cell.x, cell.y) : -1;
  if (!cell || c < 0) return <div className="cell-readout muted small">Hover a tinted cell for its numbers.</div>;
  const { ov, dir, labels } = overlay;
  const row = rowOf(c, dir);
  const probs = Array.from({ length: ov.numActions }, (_, a) => ({ a, p: ov.probs[row * ov.numActions + a] })).sort((x, y) => y.p - x.p);
  return (
    <div className="cell-readout small" data-testid="cell-readout">
      <b>
        ({cell.x}, {cell.y}) facing {HEADINGS[dir]}
      </b>
      {ov.values && <> · V {fmt(ov.values[row])}</>} ·{' '}
      {probs.map(({ a, p }) => `${labels[a] ?? a} ${Math.round(p * 100)}%`).join(', ')}
    </div>
  );
}

function MapCanvas({ frame, overlay }: { frame: GridFrame; overlay?: MapOverlay | null }) {
  const s = Math.floor(Math.min(360 / frame.width, 360 / frame.height));
  const [hover, setHover] = useState<{ x: number; y: number } | null>(null);
  const paint = useCallback(
    (ctx: CanvasRenderingContext2D) => {
      paintGridFrame(ctx, frame, s, !overlay);
      if (overlay) {
        paintOverlay(ctx, overlay.ov, s, overlay.dir, overlay.labels, overlay.show, frame.agent);
        // The agent again, on top of the tint.
        paintAgent(ctx, frame.agent.x * s, frame.agent.y * s, s, frame.agent.dir, frame.agent.carrying);
      }
    },
    [frame, s, overlay],
  );
  const canvas = (
    <PixelCanvas
      width={frame.width * s}
      height={frame.height * s}
      paint={paint}
      label={overlay ? 'The map at this step, each free cell tinted by the value and marked with the policy\'s most likely action' : 'The map at this step'}
      testId="replay-map"
      className="replay-map"
    />
  );
  if (!overlay) return canvas;
  return (
    <>
        <div
          className="map-hover"
          onMouseMove={(e) => {
            const r = e.currentTarget.getBoundingClientRect();
            const x = Math.floor((e.clientX - r.left) / s);
            const y = Math.floor((e.clientY - r.top) / s);
            if (x !== hover?.x || y !== hover?.y) setHover({ x, y });
          }}
          onMouseLeave={() => setHover(null)}
        >
          {canvas}
        </div>
        <CellReadout overlay={overlay} cell={hover} />
    </>
  );
}

/** Controls and legend of the value/policy map (REINFORCEjs style). */
function OverlayBar({
  on,
  setOn,
  facing,
  setFacing,
  replayDir,
  ov,
  pending,
  available,
}: {
  on: boolean;
  setOn: (v: boolean) => void;
  facing: Facing;
  setFacing: (f: Facing) => void;
  replayDir: number;
  ov: GridOverlay | null;
  pending: boolean;
  available: boolean;
}) {
  const dir = facing < 0 ? replayDir : facing;
  const range = ov ? valueRange(ov, dir) : null;
  return (
    <div className="overlay-bar" data-testid="overlay-bar" data-overlay={ov ? (ov.values ? 'value' : 'policy') : 'none'} data-version={ov?.version ?? ''} data-step={ov?.step ?? ''}>
      <label>
        <input type="checkbox" checked={on} data-testid="overlay-toggle" onChange={(e) => setOn(e.target.checked)} /> {'Value & policy map'}
      </label>
      {on && (
        <>
          <label>
            agent facing{' '}
            <select value={facing} data-testid="overlay-facing" onChange={(e) => setFacing(Number(e.target.value) as Facing)}>
              <option value={-1}>as at this step ({HEADINGS[replayDir]})</option>
              {HEADINGS.map((h, d) => (
                <option key={h} value={d}>
                  {h}
                </option>
              ))}
            </select>
          </label>
          {ov && range && ov.values && Number.isFinite(range.lo) && (
            <span className="overlay-legend" data-testid="overlay-legend">
              V(s) <span className="tok-scale-end">{fmt(range.lo)}</span>
              <span className="tok-scale overlay-scale" style={{ background: `linear-gradient(to right, ${valueColor(range.lo, range, 1)}, ${valueColor((range.lo + range.hi) / 2, range, 1)}, ${valueColor(range.hi, range, 1)})` }} />
              <span className="tok-scale-end">{fmt(range.hi)}</span>
            </span>
          )}
          <span className="muted small">
            {ov
              ? `${ov.values ? 'Tint = the critic\'s value with the agent standing on that cell; ' : 'No value head (not PPO): policy only; '}arrow / word = the policy's most likely action there, darker = surer. Weights v${ov.version}${pending ? ' · updating…' : ''}.`
              : available
                ? 'computing in the training worker…'
                : 'Needs a run in the training worker (start one, or press Step).'}
          </span>
        </>
      )}
    </div>
  );
}

function EgoCanvas({ image }: { image: Uint8Array }) {
  const v = egoViewSize(image.length) || 7;
  const s = Math.floor(168 / v);
  const paint = useCallback((ctx: CanvasRenderingContext2D) => paintEgoView(ctx, image, s), [image, s]);
  return <PixelCanvas width={v * s} height={v * s} paint={paint} label="What the agent saw at this step" testId="replay-ego" className="replay-ego" />;
}

function EpisodeList({ episodes, index, onPick }: { episodes: EpisodeView[]; index: number; onPick: (i: number) => void }) {
  // Position of each episode within its group (episodes arrive group by group).
  const count = new Map<number, number>();
  const pos = episodes.map((ep) => {
    const c = count.get(ep.group) ?? 0;
    count.set(ep.group, c + 1);
    return c;
  });
  return (
    <ol className="ep-list" aria-label="Episodes in this batch" data-testid="episode-list">
      <li className="ep-item ep-header" aria-hidden>
        <span />
        <span>ep</span>
        <span>steps</span>
        <span>reward</span>
        <span>adv</span>
      </li>
      {episodes.map((ep, i) => (
        <li key={i}>
          <button type="button" className={`ep-item ${i === index ? 'ep-on' : ''}`} aria-current={i === index} data-testid={`episode-${i}`} onClick={() => onPick(i)}>
            <span className={`ep-dot ${ep.success ? 'ep-dot-ok' : ep.truncated ? 'ep-dot-trunc' : 'ep-dot-fail'}`} aria-hidden />
            <span className="ep-name">{ep.group >= 0 ? `G${ep.group + 1}·${pos[i] + 1}` : `#${i + 1}`}</span>
            <span className="ep-num">{ep.actions.length}</span>
            <span className="ep-num">{fmt(ep.reward)}</span>
            <span className={`ep-num ${ep.advantage > 0 ? 'txt-good' : ep.advantage < 0 ? 'txt-bad' : ''}`}>
              {ep.advantage >= 0 ? '+' : ''}
              {fmt(ep.advantage)}
            </span>
          </button>
        </li>
      ))}
    </ol>
  );
}

export function TrajectoryInspector() {
  const inspect = useStore((s) => s.inspect);
  const latest = useStore((s) => s.latest);
  const pick = useStore((s) => s.inspectEpisode);
  const batch = inspect?.batch ?? null;
  const index = inspect?.index ?? 0;
  const ep = batch?.episodes[index] ?? null;

  if (!batch || !ep) {
    return (
      <div className="panel placeholder">
        <h2>No episode picked</h2>
        <p>Train for an iteration or two, then pick an episode here or click a rollout in the Groups tab to replay it step by step.</p>
        {latest && (
          <button type="button" className="btn btn-primary" data-testid="inspect-latest" onClick={() => pick(0)}>
            Open the latest batch
          </button>
        )}
      </div>
    );
  }
  const newer = latest && latest.iteration !== batch.iteration;
  return (
    <>
    <div className="inspector" data-testid="trajectory-inspector" data-episode={index}>
      <aside className="inspector-side panel">
        <header className="panel-head">
          <h3>Iteration {batch.iteration + 1}</h3>
          {newer && (
            <button type="button" className="link-btn" data-testid="inspect-newest" onClick={() => pick(0)}>
              newest batch ({latest.iteration + 1})
            </button>
          )}
        </header>
        <EpisodeList episodes={batch.episodes} index={index} onPick={(i) => pick(i, true)} />
      </aside>
      {/* Keyed by episode: a newly picked episode starts at its first step. */}
      {ep.kind === 'grid' ? (
        <GridReplay key={`${batch.iteration}:${index}`} ep={ep} index={index} />
      ) : (
        <TokenReplay key={`${batch.iteration}:${index}`} ep={ep} index={index} batchEpisodes={batch.episodes} />
      )}
    </div>
    <LossLens batch={batch} />
    </>
  );
}

function GridReplay({ ep, index }: { ep: GridEpisodeView; index: number }) {
  const config = useStore((s) => s.running ?? s.draft);
  const catalog = useStore((s) => s.catalog);
  const T = ep.actions.length;
  const { t, setT, playing, setPlaying } = usePlayback(T, 0, 220);
  const [stripBy, setStripBy] = useState<StripBy>('logprob');
  const [mapOn, setMapOn] = useState(true);
  const [facing, setFacing] = useState<Facing>(-1);
  const { overlay: ov, pending, available } = useGridOverlay(ep, t, mapOn);
  const spec = catalog.find((c) => c.id === config.env.id)?.spec;
  const labels = spec?.actionSpace.kind === 'discrete' ? (spec.actionSpace.labels ?? []) : [];
  const maxEntropy = Math.log(spec?.actionSpace.kind === 'discrete' ? spec.actionSpace.n : 7);

  const replay = useMemo(() => {
    try {
      return replayGrid(config.env.id, config.env.kwargs ?? {}, ep.seed, ep.actions);
    } catch (e) {
      return { error: (e as Error).message };
    }
  }, [ep, config.env.id, config.env.kwargs]);

  if ('error' in replay) return <div className="panel">Could not replay this episode: {replay.error}</div>;

  const state = replay.states[Math.min(t, replay.states.length - 1)];
  const replayDir = state.frame.agent.dir;
  const mapOverlay: MapOverlay | null = ov && (ov.step === t || pending) ? { ov, dir: facing < 0 ? replayDir : facing, labels, show: { value: true, policy: true } } : null;
  return (
      <section className="panel inspector-main" data-testid="grid-replay" data-step={t} data-steps={T}>
        <header className="inspector-head">
          <GridEpisodeSummary ep={ep} index={index} />
          <ReplayControls t={t} max={T} playing={playing} setT={setT} setPlaying={setPlaying} prefix="replay" labels={{ first: 'First step', prev: 'Previous step', next: 'Next step', last: 'Last step' }} />
        </header>

        <Scrubber value={t} max={T} unit="step" testId="replay-slider" onScrub={(v) => { setPlaying(false); setT(v); }} />
        <StepStrip ep={ep} t={t} stripBy={stripBy} setStripBy={setStripBy} labels={labels} maxEntropy={maxEntropy} onStep={setT} />

        {replay.problem && <p className="field-msg">Replay mismatch: {replay.problem}.</p>}
        <OverlayBar on={mapOn} setOn={setMapOn} facing={facing} setFacing={setFacing} replayDir={replayDir} ov={mapOverlay ? ov : null} pending={pending} available={available} />

        <div className="replay-row">
          <figure className="replay-fig">
            <figcaption>The world</figcaption>
            <MapCanvas frame={state.frame} overlay={mapOverlay} />
          </figure>
          <figure className="replay-fig">
            <figcaption>What the agent saw</figcaption>
            <EgoCanvas image={state.obs.image} />
          </figure>
          <StepFacts ep={ep} t={t} labels={labels} maxEntropy={maxEntropy} />
        </div>
      </section>
  );
}
