/**
 * Play a checked code env by hand: a grid env's view (drawn as the agent sees it) with its action
 * buttons and the arrow keys, a vector env's observation as a table (element, value) with its
 * action buttons and the digit keys, or a text env's transcript with a box to write the agent's
 * action. The Expert buttons play the module's expert() (one step, or to the end of the episode).
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

/** A vector observation as a table: one row per element, its name (or index) and value. */
function VectorTable({ values, labels }: { values: readonly number[]; labels: readonly string[] | null }) {
  return (
    <table className="code-env-vector" data-testid="code-env-vector">
      <caption className="visually-hidden">The observation: {values.length} numbers</caption>
      <thead>
        <tr>
          <th scope="col">Element</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody>
        {values.map((v, i) => (
          <tr key={i}>
            <th scope="row">{labels ? labels[i] : `[${i}]`}</th>
            <td>{Number(v.toPrecision(4))}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Expert steps the "Expert to the end" button plays at most (an episode's limit caps it too). */
const EXPERT_TO_END = 10_000;

/** The play session in the code worker: its current view, its last failure, and the moves. */
function useCodePlay(code: string, seed: number) {
  const [view, setView] = useState<StudioView | null>(null);
  const [error, setError] = useState<string | null>(null);
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
  const expert = async (steps: number) => {
    if (!view || view.done) return;
    setError(null);
    try {
      setView(await codeStudio().expert(steps));
    } catch (e) {
      setError(messageOf(e));
    }
  };
  return { view, error, start, act, expert };
}

/** The action a key takes in a grid or vector env's play area, or null (the key is left alone). */
function keyAction(e: React.KeyboardEvent, spec: StudioSpec): number | null {
  const vector = spec.observation === 'vector';
  if (!(spec.observation === 'grid' || vector) || e.ctrlKey || e.metaKey || e.altKey) return null;
  // Vector envs: digit k takes action k−1 (their action names are the module's own).
  const digit = vector && /^[1-9]$/.test(e.key) && Number(e.key) <= spec.actions.length ? Number(e.key) - 1 : null;
  return vector ? digit : actionForKey({ kind: 'discrete' as const, n: spec.actions.length, labels: spec.actions }, e.key);
}

interface StageProps {
  spec: StudioSpec;
  view: StudioView;
  act: (action: number | string) => void;
}

function GridStage({ spec, view, frame, act, onKey }: StageProps & { frame: GridFrame; onKey: (e: React.KeyboardEvent) => void }) {
  return (
    // The keys play the env while this area has focus (arrows turn and move, as in Environments).
    <div className="code-env-stage" tabIndex={0} onKeyDown={onKey} aria-label="Play area: arrow keys turn and move" data-testid="code-env-stage">
      <GridPicture frame={frame} />
      <div className="code-env-actions" role="group" aria-label="Actions">
        {spec.actions.map((name, i) => (
          <button key={name} type="button" className="btn btn-small" disabled={view.done} onClick={() => act(i)} data-testid={`code-env-action-${name}`}>
            {name}
          </button>
        ))}
      </div>
    </div>
  );
}

function VectorStage({ spec, view, values, act, onKey }: StageProps & { values: readonly number[]; onKey: (e: React.KeyboardEvent) => void }) {
  return (
    // Digit keys take the actions while this area has focus (1 = the first action, …).
    <div className="code-env-stage" tabIndex={0} onKeyDown={onKey} aria-label={`Play area: keys 1 to ${spec.actions.length} take the actions`} data-testid="code-env-stage">
      <VectorTable values={values} labels={spec.vectorLabels} />
      <div className="code-env-actions" role="group" aria-label="Actions">
        {spec.actions.map((name, i) => (
          <button key={name} type="button" className="btn btn-small" disabled={view.done} onClick={() => act(i)} data-testid={`code-env-action-${i}`}>
            {i + 1}: {name}
          </button>
        ))}
      </div>
      {view.action !== null && typeof view.action === 'number' && (
        <p className="small muted" data-testid="code-env-last-action">
          Last action: {spec.actions[view.action]} · reward {view.reward}
        </p>
      )}
    </div>
  );
}

function TextStage({ spec, view, act }: StageProps) {
  const [text, setText] = useState('');
  return (
    <div className="code-env-stage">
      <pre className="code-env-transcript" data-testid="code-env-transcript">
        {view.text}
      </pre>
      <form
        className="code-env-row"
        onSubmit={(e) => {
          e.preventDefault();
          act(text);
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
  );
}

export function CodePlay({ code, spec }: { code: string; spec: StudioSpec }) {
  const [seed, setSeed] = useState(0);
  const { view, error, start, act, expert } = useCodePlay(code, seed);
  const play = (action: number | string) => void act(action);
  const onKey = (e: React.KeyboardEvent) => {
    const a = keyAction(e, spec);
    if (a === null) return;
    e.preventDefault();
    play(a);
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
        {view && spec.hasExpert && (
          <>
            <button type="button" className="btn" disabled={view.done} onClick={() => void expert(1)} data-testid="code-env-expert-step" title="One step of the module's expert()">
              Expert step
            </button>
            <button type="button" className="btn" disabled={view.done} onClick={() => void expert(EXPERT_TO_END)} data-testid="code-env-expert" title="The module's expert() plays to the end of the episode">
              Expert to the end
            </button>
          </>
        )}
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
      {view && spec.observation === 'grid' && view.frame.kind === 'grid' && <GridStage spec={spec} view={view} frame={view.frame} act={play} onKey={onKey} />}
      {view && spec.observation === 'vector' && view.vector && <VectorStage spec={spec} view={view} values={view.vector} act={play} onKey={onKey} />}
      {view && spec.observation === 'text' && <TextStage spec={spec} view={view} act={play} />}
    </section>
  );
}
