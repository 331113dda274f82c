/**
 * The grid replay's pieces: the episode's summary, the strip of steps (coloured by the chosen
 * action's probability or by certainty) with its legend, and the facts of the current step.
 */
import type { GridEpisodeView } from '../../runtime/trainWorker/types.ts';
import { fmt } from '../ui/MetricChart.tsx';
import { SignedAdvantage } from './SignedAdvantage.tsx';
import { EpisodeHeading } from './EpisodeHeading.tsx';

export type StripBy = 'logprob' | 'entropy';

/** Per-step strip colour: log-prob from certain (dark) to unlikely (light); entropy likewise. */
function stripColor(by: StripBy, ep: GridEpisodeView, t: number, maxEntropy: number): string {
  const x = by === 'logprob' ? Math.exp(ep.logprobs[t]) : 1 - ep.entropies[t] / maxEntropy;
  const l = 92 - 62 * Math.max(0, Math.min(1, x));
  return `hsl(${by === 'logprob' ? 243 : 270}, 70%, ${l}%)`;
}

/** How a grid episode ended, in words (the summary and the strip's end marker). */
export function gridEnd(ep: GridEpisodeView): string {
  return ep.success ? 'reached the goal (terminated)' : ep.truncated ? 'ran out of time (truncated)' : ep.terminated ? 'ended without success (terminated)' : 'did not end';
}

export function GridEpisodeSummary({ ep, index }: { ep: GridEpisodeView; index: number }) {
  const baseline = ep.group >= 0 ? "its group's average" : 'the baseline';
  return (
    <div>
      <EpisodeHeading index={index} group={ep.group} seed={ep.seed} />
      <p className="muted small">
        {ep.actions.length} steps, {gridEnd(ep)}. Reward {fmt(ep.reward)}, advantage{' '}
        <SignedAdvantage value={ep.advantage} />
        {ep.advantage > 0
          ? `: it beat ${baseline}, so every action in it was made more likely.`
          : ep.advantage < 0
            ? `: it did worse than ${baseline}, so every action in it was made less likely.`
            : ': no better or worse than the rest, so the update ignored it.'}
      </p>
    </div>
  );
}

export interface StepStripProps {
  ep: GridEpisodeView;
  t: number;
  stripBy: StripBy;
  setStripBy: (by: StripBy) => void;
  labels: readonly string[];
  maxEntropy: number;
  onStep: (k: number) => void;
}

export function StepStrip({ ep, t, stripBy, setStripBy, labels, maxEntropy, onStep }: StepStripProps) {
  return (
    <>
      <div className="strip" aria-label={`Each step coloured by ${stripBy === 'logprob' ? 'the chosen action\'s probability' : 'policy certainty (1 − entropy)'}`}>
        {Array.from({ length: ep.actions.length }, (_, k) => (
          <button
            key={k}
            type="button"
            tabIndex={-1}
            className={`strip-cell ${k === t ? 'strip-on' : ''}`}
            style={{ background: stripColor(stripBy, ep, k, maxEntropy) }}
            title={`step ${k + 1}: ${labels[ep.actions[k]] ?? ep.actions[k]}, π ${fmt(Math.exp(ep.logprobs[k]))}, H ${fmt(ep.entropies[k])}`}
            onClick={() => onStep(k)}
          />
        ))}
        <span className={`strip-end ${ep.success ? 'strip-end-ok' : ep.truncated ? 'strip-end-trunc' : 'strip-end-fail'}`} title={gridEnd(ep)}>
          {ep.success ? '✓ terminated' : ep.truncated ? 'truncated' : '✕ terminated'}
        </span>
      </div>
      <div className="strip-legend muted small">
        Strip colour:
        <label>
          <input type="radio" name="strip" checked={stripBy === 'logprob'} onChange={() => setStripBy('logprob')} /> probability of the chosen action
        </label>
        <label>
          <input type="radio" name="strip" checked={stripBy === 'entropy'} onChange={() => setStripBy('entropy')} /> certainty (low entropy)
        </label>
        <span>· darker = more sure</span>
      </div>
    </>
  );
}

/** The chip for how the episode ended (`then`: the short form beside the last step). */
function EndChip({ ep, text }: { ep: GridEpisodeView; text: string }) {
  return <span className={`chip ${ep.success ? 'chip-good' : ep.truncated ? 'chip-warn' : 'chip-bad'}`}>{text}</span>;
}

function StepRows({ ep, t, labels, maxEntropy }: { ep: GridEpisodeView; t: number; labels: readonly string[]; maxEntropy: number }) {
  return (
    <>
      <dt>Action</dt>
      <dd data-testid="step-action">
        <b>{labels[ep.actions[t]] ?? ep.actions[t]}</b>
      </dd>
      <dt>Probability π(a|s)</dt>
      <dd>
        {fmt(Math.exp(ep.logprobs[t]))} <span className="muted">(log {fmt(ep.logprobs[t])})</span>
      </dd>
      <dt>Entropy</dt>
      <dd>
        {fmt(ep.entropies[t])} nats <span className="muted">of {fmt(maxEntropy)} max</span>
      </dd>
      <dt>Reward</dt>
      <dd>{fmt(ep.rewards[t])}</dd>
      <dt>Advantage</dt>
      <dd>
        {fmt(ep.advantage)} <span className="muted">(whole episode)</span>
      </dd>
      {ep.values.some((v) => v !== 0) && (
        <>
          <dt>Value V(s)</dt>
          <dd>{fmt(ep.values[t])}</dd>
        </>
      )}
      <dt>Policy version</dt>
      <dd>v{ep.versions[t]}</dd>
      {t === ep.actions.length - 1 && (
        <>
          <dt>Then</dt>
          <dd>
            <EndChip ep={ep} text={ep.truncated && !ep.terminated ? 'truncated' : 'terminated'} />
          </dd>
        </>
      )}
    </>
  );
}

/** The current step's facts, or the episode's outcome once the replay is past its last step. */
export function StepFacts({ ep, t, labels, maxEntropy }: { ep: GridEpisodeView; t: number; labels: readonly string[]; maxEntropy: number }) {
  const T = ep.actions.length;
  return (
    <dl className="step-facts" data-testid="step-facts">
      {t >= T ? (
        <>
          <dt>Outcome</dt>
          <dd data-testid="step-end">
            <EndChip ep={ep} text={ep.success ? 'terminated: goal reached' : ep.truncated ? `truncated at the ${T}-step limit` : 'terminated'} />
          </dd>
          <dt>Episode reward</dt>
          <dd>{fmt(ep.reward)}</dd>
          <dt>Advantage</dt>
          <dd>{fmt(ep.advantage)}</dd>
        </>
      ) : (
        <StepRows ep={ep} t={t} labels={labels} maxEntropy={maxEntropy} />
      )}
    </dl>
  );
}
