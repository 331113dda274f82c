/**
 * A grid world as a student sees it: the whole map with the agent's field of view
 * highlighted, next to exactly what the agent observes (its egocentric image and the same
 * view as text). Played with the keyboard or the action buttons.
 */
import { useCallback, useEffect, useRef } from 'react';
import { DIR_NAMES } from '../../core/envs/grid/view.ts';
import { COLOR_NAMES, OBJ_NAMES } from '../../core/envs/grid/objects.ts';
import type { EnvSpec, GridFrame, GridObs } from '../../core/envs/types.ts';
import { isOver, type Episode } from '../state/episode.ts';
import { useStore } from '../store.ts';
import { PixelCanvas } from '../ui/PixelCanvas.tsx';
import { useElementSize } from '../ui/useElementSize.ts';
import { formatReward } from './EpisodeStatus.tsx';
import { egoViewSize, paintEgoView, paintGridFrame } from './gridPaint.ts';
import { actionForKey } from './keys.ts';
import { ActionPad, ObsRow, StepLog } from './GridViewParts.tsx';

/** Cell size bounds for the main map, CSS px. */
const CELL = { min: 14, max: 96 } as const;
/** Cell size of the egocentric view, CSS px. */
const EGO_CELL = 26;

function isGridObs(o: unknown): o is GridObs {
  return typeof o === 'object' && o !== null && (o as GridObs).image instanceof Uint8Array && typeof (o as GridObs).text === 'string';
}

/** Keys go to the game unless the person is typing somewhere or pressing a focused control. */
function keyIsForGame(e: KeyboardEvent): boolean {
  if (e.ctrlKey || e.metaKey || e.altKey) return false;
  const t = e.target as HTMLElement | null;
  if (!t || t === document.body) return true;
  if (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName)) return false;
  if (t.tagName === 'BUTTON' || t.tagName === 'A' || t.tagName === 'SUMMARY') return e.key !== ' ' && e.key !== 'Enter';
  return true;
}

function EndBanner({ episode }: { episode: Episode }) {
  if (!isOver(episode)) return null;
  const n = episode.steps.length;
  const text = episode.truncated
    ? `Out of time after ${n} steps (truncated)`
    : episode.success === false
      ? `Failed after ${n} steps (terminated)`
      : `Solved in ${n} steps · return ${formatReward(episode.totalReward)}`;
  const tone = episode.truncated ? 'warn' : episode.success === false ? 'bad' : 'good';
  return (
    <div className={`end-banner end-${tone}`} role="status">
      {text} <span className="end-hint">Reset or New seed to play again</span>
    </div>
  );
}

function MapCanvas({ frame, episode }: { frame: GridFrame; episode: Episode }) {
  const box = useRef<HTMLDivElement>(null);
  const { width, height } = useElementSize(box);
  const cell = Math.max(CELL.min, Math.min(CELL.max, Math.floor(Math.min(width / frame.width, height / frame.height))));
  const paint = useCallback((ctx: CanvasRenderingContext2D) => paintGridFrame(ctx, frame, cell), [frame, cell]);
  return (
    <div className="map-box" ref={box}>
      {width > 0 && (
        <PixelCanvas
          className="map-canvas"
          testId="grid-canvas"
          width={frame.width * cell}
          height={frame.height * cell}
          paint={paint}
          label={`The full map, ${frame.width} by ${frame.height}. The agent is at column ${frame.agent.x}, row ${frame.agent.y}, facing ${DIR_NAMES[frame.agent.dir] ?? '?'}.`}
        />
      )}
      <EndBanner episode={episode} />
    </div>
  );
}

function EgoCanvas({ image }: { image: Uint8Array }) {
  const v = egoViewSize(image.length);
  const paint = useCallback((ctx: CanvasRenderingContext2D) => paintEgoView(ctx, image, EGO_CELL), [image]);
  if (v === 0) return <p className="muted">The observation image is not square ({image.length} bytes).</p>;
  return (
    <PixelCanvas
      className="ego-canvas"
      testId="ego-canvas"
      width={v * EGO_CELL}
      height={v * EGO_CELL}
      paint={paint}
      label={`What the agent sees: a ${v} by ${v} view, the agent at the bottom centre facing up.`}
    />
  );
}

/** Multi-agent grids: who takes the next step (the keys move it), or that nobody does. */
function actingText(frame: GridFrame): string {
  const a = frame.agents?.find((g) => g.acting);
  return a ? `agent ${a.name.toUpperCase()} acts (the keys move it)` : 'episode over';
}

function carryText(frame: GridFrame): string {
  const c = frame.agent.carrying;
  return c ? `${COLOR_NAMES[c.color] ?? ''} ${OBJ_NAMES[c.type] ?? 'object'}`.trim() : 'nothing';
}

/** The keys play the game while the page has them: actions, E for an expert step, Backspace to undo. */
function useGameKeys(spec: EnvSpec) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!keyIsForGame(e)) return;
      const s = useStore.getState();
      if (e.key === 'e' || e.key === 'E') {
        s.setPlaying(false);
        s.expertStep();
        return;
      }
      if (e.key === 'Backspace') {
        e.preventDefault();
        s.stepBack();
        return;
      }
      const action = actionForKey(spec.actionSpace, e.key);
      if (action === null) return;
      e.preventDefault(); // arrows and space would scroll the page
      // Held arrows repeat (walking); held pickup/toggle/done would fire by accident.
      if (e.repeat && e.key !== 'ArrowUp' && e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
      s.setPlaying(false);
      s.act(action, 'you');
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [spec]);
}

function WorldPanel({ frame, episode }: { frame: GridFrame; episode: Episode }) {
  return (
    <section className="panel map-panel" aria-label="The world">
      <header className="panel-head">
        <h3>The world</h3>
        <span className="legend">
          <span className="swatch swatch-view" /> {frame.agents ? 'acting agent’s view (ringed)' : 'agent’s view'}
          <span className="swatch swatch-hidden" /> out of sight
        </span>
      </header>
      <p className="mission" data-testid="mission">
        <span className="mission-label">Mission</span> {frame.mission}
      </p>
      <MapCanvas frame={frame} episode={episode} />
    </section>
  );
}

export function GridView({ spec, episode }: { spec: EnvSpec; episode: Episode }) {
  const snap = episode.snapshots[episode.snapshots.length - 1];
  const frame = snap.frame.kind === 'grid' ? snap.frame : null;
  const obs = isGridObs(snap.obs) ? snap.obs : null;
  useGameKeys(spec);

  if (!frame) return <p className="panel">This env did not return a grid frame.</p>;

  return (
    <div className="grid-view">
      <WorldPanel frame={frame} episode={episode} />

      <section className="panel agent-panel" aria-label="What the agent sees">
        <header className="panel-head">
          <h3>What the agent sees</h3>
          <span className="muted small">
            {frame.agents && <span data-testid="acting-agent">{actingText(frame)} · </span>}
            facing {DIR_NAMES[frame.agent.dir] ?? '?'} · carrying {carryText(frame)}
          </span>
        </header>
        <ObsRow obs={obs} image={obs ? <EgoCanvas image={obs.image} /> : <p className="muted">No image observation.</p>} />
        <p className="muted small obs-note">
          The agent always faces up in its own view; black cells are out of its sight.
        </p>

        <ActionPad spec={spec} over={isOver(episode)} />

        <p className="muted small key-hint">
          <kbd>E</kbd> expert step · <kbd>⌫</kbd> undo · click a step below to rewind to it
        </p>

        <StepLog episode={episode} />
      </section>
    </div>
  );
}
