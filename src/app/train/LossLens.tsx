/**
 * The loss lens: one iteration's trained tokens (grid steps for MLP runs, policy tokens for tool
 * envs) as a scatter of ratio r (log axis) against advantage A, marked by what the run's loss did
 * to each (full, cut, faded, bounded), and beside it the same tokens under a loss picked to compare.
 */
import { useId, useMemo, useState } from 'react';
import type { LensState } from '../../core/update/lossLens.ts';
import type { LensSample } from '../../core/update/lensSample.ts';
import type { PgObjective } from '../../core/update/surrogates.ts';
import type { IterationView } from '../../runtime/trainWorker/types.ts';
import { useStore } from '../store.ts';
import { fmt } from '../ui/MetricChart.tsx';
import { countsText, LENS_OBJECTIVES, LENS_STATES, lensLossOf, objectiveLabel, readLens, type LensReading } from './lossLensView.ts';

const W = 320;
const H = 220;
const PAD = 28;

/** Colour and mark per state: colour and shape both differ, so the states read without colour too. */
const MARK: Record<LensState, { color: string; glyph: string; what: string }> = {
  full: { color: '#2563eb', glyph: '●', what: 'passed with weight r' },
  cut: { color: '#dc2626', glyph: '✕', what: 'clipped: weight 0' },
  faded: { color: '#c2410c', glyph: '▲', what: 'gated: weight under 0.9·r' },
  bounded: { color: '#7c3aed', glyph: '■', what: 'weight held to [1−ε, 1+ε]' },
  masked: { color: '#6b7280', glyph: '◆', what: 'gradient stopped by Clip-Cov' },
};

function Point({ x, y, state }: { x: number; y: number; state: LensState }) {
  const c = MARK[state].color;
  if (state === 'cut') return <path d={`M${x - 3} ${y - 3}L${x + 3} ${y + 3}M${x - 3} ${y + 3}L${x + 3} ${y - 3}`} stroke={c} strokeWidth={1.5} />;
  if (state === 'faded') return <path d={`M${x} ${y - 3.5}L${x + 3.5} ${y + 3}L${x - 3.5} ${y + 3}Z`} fill={c} />;
  if (state === 'bounded') return <rect x={x - 3} y={y - 3} width={6} height={6} fill={c} />;
  return <circle cx={x} cy={y} r={2.5} fill={c} fillOpacity={state === 'masked' ? 0.5 : 0.7} />;
}

function Scatter({ s, reading, title, clip }: { s: LensSample; reading: LensReading; title: string; clip: { lo: number; hi: number } }) {
  const xMax = Math.min(3, Math.max(Math.log(1.5), ...Array.from(s.logRatio, Math.abs)));
  const yMax = Math.max(1e-6, ...Array.from(s.adv, Math.abs));
  const px = (l: number) => PAD + ((Math.max(-xMax, Math.min(xMax, l)) + xMax) / (2 * xMax)) * (W - 2 * PAD);
  const py = (a: number) => H - PAD - ((a + yMax) / (2 * yMax)) * (H - 2 * PAD);
  const ticks = [0.5, 1 - clip.lo, 1, 1 + clip.hi, 2].filter((r) => Math.abs(Math.log(r)) <= xMax);
  return (
    <svg viewBox={`0 0 ${W} ${H}`} className="lens-svg" role="img" aria-label={`${title}: ${countsText(title, reading)}`}>
      <line x1={PAD} x2={W - PAD} y1={py(0)} y2={py(0)} stroke="currentColor" strokeOpacity={0.3} />
      {ticks.map((r) => (
        <g key={r}>
          <line x1={px(Math.log(r))} x2={px(Math.log(r))} y1={PAD} y2={H - PAD} stroke="currentColor" strokeOpacity={r === 1 ? 0.4 : 0.15} strokeDasharray={r === 1 ? undefined : '3 3'} />
          <text x={px(Math.log(r))} y={H - PAD + 14} fontSize={10} textAnchor="middle" fill="currentColor">
            {+r.toFixed(2)}
          </text>
        </g>
      ))}
      <text x={4} y={PAD - 8} fontSize={10} fill="currentColor">
        A {fmt(yMax)}
      </text>
      <text x={4} y={H - PAD + 2} fontSize={10} fill="currentColor">
        {fmt(-yMax)}
      </text>
      <text x={W - PAD} y={H - 4} fontSize={10} textAnchor="end" fill="currentColor">
        ratio r (log axis)
      </text>
      {reading.state.map((st, i) => (
        <Point key={i} x={px(s.logRatio[i])} y={py(s.adv[i])} state={st} />
      ))}
    </svg>
  );
}

function Panel({ s, reading, title, testId, clip }: { s: LensSample; reading: LensReading; title: string; testId: string; clip: { lo: number; hi: number } }) {
  const mean = reading.weight.reduce((a, w) => a + w, 0) / Math.max(1, reading.weight.length);
  return (
    <figure className="lens-panel" data-testid={testId}>
      <figcaption className="small">
        <b>{title}</b>
      </figcaption>
      <Scatter s={s} reading={reading} title={title} clip={clip} />
      <p className="small" data-testid={`${testId}-counts`}>
        {countsText(title, reading)} Mean weight {fmt(mean)}.
      </p>
    </figure>
  );
}

/** The lens for the inspected iteration, or one sentence saying why there is nothing to read. */
export function LossLens({ batch }: { batch: IterationView }) {
  const config = useStore((s) => s.running ?? s.draft);
  const selectId = useId();
  const own = useMemo(() => lensLossOf(config.algo), [config.algo]);
  const [other, setOther] = useState<PgObjective>(own.objective === 'sapo' ? 'clip' : 'sapo');
  const s = batch.lens;
  const runReading = useMemo(() => (s ? readLens(own, s) : null), [s, own]);
  const otherReading = useMemo(() => (s ? readLens({ ...own, objective: other }, s) : null), [s, own, other]);
  const clip = { lo: own.clipLow, hi: own.clipHigh };
  return (
    <section className="panel loss-lens" aria-labelledby={`${selectId}-h`} data-testid="loss-lens">
      <header className="panel-head">
        <h3 id={`${selectId}-h`}>Loss lens · iteration {batch.iteration + 1}</h3>
      </header>
      {!s || !runReading || !otherReading ? (
        <p className="muted small" data-testid="loss-lens-none">
          This iteration trained no policy-gradient loss (a distill stage, or a batch skipped for zero reward spread), so there are no token ratios to show.
        </p>
      ) : (
        <>
          <p className="muted small">
            Each mark is one trained token ({s.logRatio.length === s.total ? `all ${s.total}` : `${s.logRatio.length} of ${s.total}, evenly spaced`}; grid steps on grid runs, policy tokens on tool envs): its ratio r = π_θ/π_old at the optimizer step that trained it, in the first update pass (the first minibatch reads r = 1), against its advantage A. The mark says what the loss did with it; the weight multiplies −A·∇log π. Clip-Cov's random mask is not shown.
          </p>
          <div className="lens-compare">
            <label htmlFor={selectId}>Compare with</label>{' '}
            <select id={selectId} data-testid="lens-compare" value={other} onChange={(e) => setOther(e.target.value as PgObjective)}>
              {LENS_OBJECTIVES.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.label}
                </option>
              ))}
            </select>
          </div>
          <div className="lens-panels">
            <Panel s={s} reading={runReading} title={`This run: ${objectiveLabel(own.objective)}`} testId="lens-run" clip={clip} />
            <Panel s={s} reading={otherReading} title={`Compared: ${objectiveLabel(other)}`} testId="lens-other" clip={clip} />
          </div>
          <ul className="lens-legend small" aria-label="What the marks mean">
            {LENS_STATES.map((k) => (
              <li key={k}>
                <span aria-hidden="true" style={{ color: MARK[k].color }}>
                  {MARK[k].glyph}
                </span>{' '}
                {k}: {MARK[k].what}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
