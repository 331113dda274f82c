/**
 * The grid viewer's agent panel pieces: the observation (its egocentric image and the same view
 * as text, with a legend), the action pad, and the log of recent steps (each a rewind button).
 */
import type { EnvSpec, GridObs } from '../../core/envs/types.ts';
import type { Episode } from '../state/episode.ts';
import { useStore } from '../store.ts';
import { keepFocus } from './EpisodeControls.tsx';
import { formatReward } from './EpisodeStatus.tsx';
import { actionButtons } from './keys.ts';
import { legendFor } from './textLegend.ts';

/** The observation as text beside its image (`image`: the egocentric canvas, or a note when there is none). */
export function ObsRow({ obs, image }: { obs: GridObs | null; image: React.ReactNode }) {
  return (
    <div className="obs-row">
      {image}
      <figure className="obs-text-box">
        <figcaption>as text</figcaption>
        <pre className="obs-text" data-testid="obs-text">
          {obs?.text ?? ''}
        </pre>
        <ul className="text-legend" aria-label="Legend">
          {legendFor(obs?.text ?? '').map((e) => (
            <li key={e.symbol + e.meaning}>
              <code>{e.symbol}</code> {e.meaning}
            </li>
          ))}
        </ul>
      </figure>
    </div>
  );
}

export function ActionPad({ spec, over }: { spec: EnvSpec; over: boolean }) {
  const act = useStore((s) => s.act);
  return (
    <div className="action-pad" role="group" aria-label="Actions">
      {actionButtons(spec.actionSpace).map((b) => (
        <button
          key={b.action}
          type="button"
          className="btn action-btn"
          data-testid={`action-${b.label}`}
          disabled={over}
          onClick={() => {
            useStore.getState().setPlaying(false);
            act(b.action, 'you');
          }}
          {...keepFocus}
        >
          <span className="action-name">{b.label}</span>
          {b.caption && <kbd>{b.caption}</kbd>}
        </button>
      ))}
    </div>
  );
}

/** The last 14 steps, each a button that rewinds to just before it. */
export function StepLog({ episode }: { episode: Episode }) {
  const recent = episode.steps.slice(-14);
  return (
    <ol className="step-log" aria-label="Recent actions" data-testid="step-log">
      {recent.length === 0 && <li className="muted">No actions yet: use the keys or buttons, or step the expert.</li>}
      {recent.map((st, i) => {
        const n = episode.steps.length - recent.length + i + 1;
        return (
          <li key={n}>
            <button
              type="button"
              className={`step-chip by-${st.by}`}
              title={`Step ${n} by ${st.by === 'you' ? 'you' : st.by === 'agent' ? 'the trained agent' : 'the expert'}, reward ${st.reward}. Click to go back to just before it.`}
              onClick={() => useStore.getState().rewindTo(n - 1)}
              {...keepFocus}
            >
              <span className="step-n">{n}</span>
              {st.label}
              {st.reward !== 0 && <span className="step-r">{st.reward > 0 ? '+' : ''}{formatReward(st.reward)}</span>}
            </button>
          </li>
        );
      })}
    </ol>
  );
}
