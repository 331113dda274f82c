/**
 * Play a checked code env by hand: a grid env's view (drawn as the agent sees it) with its action
 * buttons and the arrow keys, or a text env's transcript with a box to write the agent's action.
 * Every step runs in the code worker.
 */
import { useCallback, useState } from 'react';
import type { GridFrame } from '../../../core/envs/types.ts';
import { paintGridFrame } from '../../env/gridPaint.ts';
import { actionForKey } from '../../env/keys.ts';
import { PixelCanvas } from '../../ui/PixelCanvas.tsx';
import type { StudioSpec, StudioView } from '../../../runtime/codeEnv/studioWorker.ts';
import { codeStudio, messageOf } from './studioClient.ts';

const CELL = 34;

function GridPicture({ frame }: { frame: GridFrame }) {
  const paint = useCallback((ctx: CanvasRenderingContext2D) => paintGridFrame(ctx, frame, CELL, false), [frame]);
  return <PixelCanvas width={frame.width * CELL} height={frame.height * CELL} paint={paint} label={`The agent's ${frame.width} by ${frame.height} view; the agent is at the bottom centre, facing up.`} testId="code-env-view" />;
}

export function CodePlay({ code, spec }: { code: string; spec: StudioSpec }) {
  const [seed, setSeed] = useState(0);
  const [view, setView] = useState<StudioView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [text, setText] = useState('');
  const grid = spec.family === 'grid';
  const space = { kind: 'discrete' as const, n: spec.actions.length, labels: spec.actions };

  const start = async () => {
    setError(null);
    try {
      setView(await codeStudio().play(code, seed));
    } catch (e) {
      setError(messageOf(e));
    }
  };
  const act = async (action: number | string) => {
    if (!view || view.done) return;
    try {
      setView(await codeStudio().act(action));
    } catch (e) {
      setError(messageOf(e));
    }
  };
  const onKey = (e: React.KeyboardEvent) => {
    if (!grid || e.ctrlKey || e.metaKey || e.altKey) return;
    const a = actionForKey(space, e.key);
    if (a === null) return;
    e.preventDefault();
    void act(a);
  };

  return (
    <section className="code-env-play" aria-labelledby="code-env-play-h">
      <h2 id="code-env-play-h">Play by hand</h2>
      <div className="code-env-row">
        <label>
          Seed{' '}
          <input type="number" min={0} step={1} value={seed} onChange={(e) => setSeed(Math.max(0, Math.floor(Number(e.target.value) || 0)))} data-testid="code-env-seed" />
        </label>
        <button type="button" className="btn" onClick={() => void start()} data-testid="code-env-play">
          {view ? 'Restart' : 'Play'}
        </button>
        {view && (
          <span role="status" data-testid="code-env-play-status">
            step {view.step}/{spec.maxSteps} · return {view.returnSoFar.toFixed(3)}
            {view.done ? ` · ${view.success ? 'success' : 'ended without success'}` : ''}
          </span>
        )}
      </div>
      {error && (
        <p className="code-env-error" role="alert" data-testid="code-env-play-error">
          {error}
        </p>
      )}
      {view && grid && view.frame.kind === 'grid' && (
        // The keys play the env while this area has focus (arrows turn and move, as in Environments).
        <div className="code-env-stage" tabIndex={0} onKeyDown={onKey} aria-label="Play area: arrow keys turn and move" data-testid="code-env-stage">
          <GridPicture frame={view.frame} />
          <div className="code-env-actions" role="group" aria-label="Actions">
            {spec.actions.map((name, i) => (
              <button key={name} type="button" className="btn btn-small" disabled={view.done} onClick={() => void act(i)} data-testid={`code-env-action-${name}`}>
                {name}
              </button>
            ))}
          </div>
        </div>
      )}
      {view && !grid && (
        <div className="code-env-stage">
          <pre className="code-env-transcript" data-testid="code-env-transcript">
            {view.text}
          </pre>
          <form
            className="code-env-row"
            onSubmit={(e) => {
              e.preventDefault();
              void act(text);
              setText('');
            }}
          >
            <label>
              Action{' '}
              <input type="text" value={text} onChange={(e) => setText(e.target.value)} placeholder={`${spec.actions[0]}(…)`} disabled={view.done} data-testid="code-env-text-action" />
            </label>
            <button type="submit" className="btn btn-small" disabled={view.done}>
              Send
            </button>
          </form>
        </div>
      )}
    </section>
  );
}
