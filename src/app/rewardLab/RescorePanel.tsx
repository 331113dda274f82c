/**
 * The reward lab's counterfactual re-scoring: freeze the last few batches of the run, then score
 * them again with the editor's code, without training. Shows how many advantages flip sign, each
 * term's distribution over the buffer (per-episode sums) before and after, and the episodes that
 * moved most, each openable in the trajectory inspector. The scoring runs in the re-score worker
 * (user code never runs on the page); this component only draws its answer.
 */
import { useMemo, useState } from 'react';
import type { Distribution, RescoredEpisode } from '../../core/reward/rescore.ts';
import { fmt } from '../ui/MetricChart.tsx';
import { recentBatches, useRecentBatches } from './recentBatches.ts';
import { freezeBuffer, openFrozenEpisode, rescoreFrozen, useRescore, type FrozenBuffer, type RescoreAnswer } from './rescore.ts';
import { useRewardLab } from './rewardLab.ts';

const ITERATION_CHOICES = [1, 2, 4, 8] as const;

/** Iterations as a person counts them (1-based), e.g. "3–6" or "5". */
function iterationRange(its: readonly number[]): string {
  if (its.length === 0) return '';
  const a = its[0] + 1;
  const b = its[its.length - 1] + 1;
  return a === b ? `${a}` : `${a}–${b}`;
}

const signed = (x: number) => `${x > 0 ? '+' : ''}${fmt(x)}`;

/**
 * Before and after histograms on shared bins: grey bars before, violet after (side by side per
 * bin), with the range under them. SVG in a fixed 220×56 box.
 */
function Histogram({ d }: { d: Distribution }) {
  const W = 220;
  const H = 56;
  const bins = d.edges.length - 1;
  const peak = Math.max(1, ...(d.before ?? []), ...(d.after ?? []));
  const bw = W / bins;
  const both = d.before !== null && d.after !== null;
  const bar = (counts: number[] | null, side: 0 | 1, cls: string) =>
    counts?.map((c, i) => {
      const h = (c / peak) * (H - 2);
      const w = both ? bw / 2 - 1 : bw - 2;
      const x = i * bw + 1 + (both ? side * (bw / 2) : 0);
      return c > 0 ? <rect key={`${cls}${i}`} className={cls} x={x} y={H - h} width={w} height={h} /> : null;
    });
  return (
    <svg className="rescore-hist" viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label={`${d.name}: histogram before and after`}>
      <line x1={0} x2={W} y1={H - 0.5} y2={H - 0.5} className="rescore-axis" />
      {bar(d.before, 0, 'rescore-before')}
      {bar(d.after, 1, 'rescore-after')}
    </svg>
  );
}

function DistCard({ d }: { d: Distribution }) {
  const b = d.beforeSummary;
  const a = d.afterSummary;
  const kind = d.before && d.after ? 'changed' : d.after ? 'new' : 'removed';
  return (
    <figure className="rescore-dist" data-testid={`rescore-dist-${d.name}`} data-kind={kind} data-after-mean={a?.mean ?? ''} data-before-mean={b?.mean ?? ''}>
      <figcaption>
        <b>{d.name === 'return' ? 'shaped return' : d.name}</b>{' '}
        <span className="muted">{kind === 'new' ? '· new term' : kind === 'removed' ? '· removed by the edit' : ''}</span>
      </figcaption>
      <Histogram d={d} />
      <div className="rescore-range muted">
        <span>{fmt(d.edges[0])}</span>
        <span>{fmt(d.edges[d.edges.length - 1])}</span>
      </div>
      <table className="rescore-stats">
        <thead>
          <tr>
            <th />
            <th>mean</th>
            <th>median</th>
            <th>range</th>
          </tr>
        </thead>
        <tbody>
          {(
            [
              ['before', b],
              ['after', a],
            ] as const
          ).map(
            ([label, x]) =>
              x && (
                <tr key={label}>
                  <td>
                    <span className={`rescore-key rescore-key-${label}`} /> {label}
                  </td>
                  <td>{fmt(x.mean)}</td>
                  <td>{fmt(x.median)}</td>
                  <td>
                    {fmt(x.min)} … {fmt(x.max)}
                  </td>
                </tr>
              ),
          )}
        </tbody>
      </table>
    </figure>
  );
}

function MovedTable({ frozen, episodes, moved }: { frozen: FrozenBuffer; episodes: RescoredEpisode[]; moved: number[] }) {
  if (moved.length === 0) return <p className="muted small">No episode's return or advantage changed.</p>;
  return (
    <table className="rescore-moved" data-testid="rescore-moved">
      <thead>
        <tr>
          <th>Episode</th>
          <th>{frozen.episodes[0]?.text ? 'Turns' : 'Steps'}</th>
          <th>Return before → after</th>
          <th>Advantage before → after</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {moved.map((i) => {
          const f = frozen.episodes[i];
          const e = episodes[i];
          return (
            <tr key={i} data-testid="rescore-moved-row" data-flip={e.flip ? 'true' : 'false'} data-iteration={f.iteration + 1} data-index={f.index}>
              <td>
                it {f.iteration + 1} · {f.group >= 0 ? `group ${f.group + 1} · ` : ''}#{f.index + 1} <span className="muted">seed {f.seed}</span> {f.success ? '✓' : ''}
              </td>
              <td>{f.text ? f.text.actions.length : f.actions.length}</td>
              <td>
                {fmt(e.oldReturn)} → {fmt(e.newReturn)}
              </td>
              <td>
                <span className={e.oldAdv > 0 ? 'txt-good' : e.oldAdv < 0 ? 'txt-bad' : ''}>{signed(e.oldAdv)}</span> →{' '}
                <span className={e.newAdv > 0 ? 'txt-good' : e.newAdv < 0 ? 'txt-bad' : ''}>{signed(e.newAdv)}</span>
                {e.flip && (
                  <span className="rescore-flip" title="the advantage changed sign: training would push this episode the other way">
                    flips
                  </span>
                )}
              </td>
              <td>
                <button type="button" className="link-btn" data-testid="rescore-open" onClick={() => openFrozenEpisode(i)}>
                  Open in inspector
                </button>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The answer of a re-score: the headline, each term's distribution, the most moved episodes. */
function Answer({ frozen, answer, edited }: { frozen: FrozenBuffer; answer: RescoreAnswer; edited: boolean }) {
  const r = answer.result;
  return (
    <div className="rescore-result" data-testid="rescore-result">
      <p className="rescore-headline" data-testid="rescore-flips" data-flips={r.flips} data-n={r.n}>
        <b>
          {r.flips} of {r.n} advantages flip sign
        </b>
        <span className="muted small">
          {' '}
          · {r.changed} returns change · {r.advantageNote} · {answer.ms.toFixed(0)} ms in the worker{edited ? ' · the editor changed since: re-score to update' : ''}
        </span>
      </p>
      {answer.problems.length > 0 && (
        <ul className="reward-lab-problems" data-testid="rescore-problems">
          {answer.problems.map((p, i) => (
            <li key={i}>{p}</li>
          ))}
        </ul>
      )}
      <div className="rescore-dists">
        {r.distributions.map((d) => (
          <DistCard key={d.name} d={d} />
        ))}
      </div>
      <h5 className="rescore-sub">Episodes that moved most</h5>
      <MovedTable frozen={frozen} episodes={r.episodes} moved={r.moved} />
    </div>
  );
}

/** `flush`: writes the editor's pending edit to the lab's store (re-scoring reads it). */
export function RescorePanel({ flush }: { flush: () => void }) {
  const available = useRecentBatches((s) => s.available);
  const { frozen, answer, busy, error, note } = useRescore();
  const edited = useRewardLab((s) => (answer ? s.text !== answer.code : false));
  const [iterations, setIterations] = useState<number>(4);
  // Batches scored by the current code version (what Freeze takes from).
  const latest = useRewardLab((s) => s.versions[s.versions.length - 1]);
  const since = latest?.iteration ?? 0;
  const usable = useMemo(() => (available ? recentBatches().filter((b) => b.iteration >= since) : []), [available, since]);
  const usableEpisodes = usable.reduce((n, b) => n + b.episodes.length, 0);
  return (
    <section className="rescore" data-testid="rescore">
      <header className="rescore-head">
        <h4>Re-score without training</h4>
        <span className="muted small">
          Freeze recent episodes, then score them again with the editor&apos;s code: nothing trains, the run keeps its weights and iteration.
        </span>
      </header>
      <div className="rescore-controls">
        <label className="small">
          last{' '}
          <select value={iterations} data-testid="rescore-iterations" onChange={(e) => setIterations(Number(e.target.value))}>
            {ITERATION_CHOICES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>{' '}
          iteration{iterations === 1 ? '' : 's'}
        </label>
        <button type="button" className="btn" data-testid="rescore-freeze" disabled={usable.length === 0 || busy} onClick={() => freezeBuffer(iterations)}>
          Freeze buffer
        </button>
        <span className="muted small" data-testid="rescore-frozen" data-episodes={frozen?.episodes.length ?? 0}>
          {frozen
            ? `${frozen.episodes.length} episodes frozen from iteration${frozen.iterations.length > 1 ? 's' : ''} ${iterationRange(frozen.iterations)}${frozen.version ? `, scored by v${frozen.version}` : ', no reward code'}`
            : usable.length > 0
              ? `${usableEpisodes} episodes from iteration${usable.length > 1 ? 's' : ''} ${iterationRange(usable.map((b) => b.iteration))}${latest ? ` (scored by v${latest.version})` : ''} can be frozen`
              : available
                ? `no batch scored by v${latest?.version ?? 0} yet: train one more iteration`
                : 'train a run to have episodes to freeze'}
        </span>
        <button
          type="button"
          className="btn btn-primary"
          data-testid="rescore-run"
          disabled={!frozen || busy}
          onClick={() => {
            flush();
            void rescoreFrozen(useRewardLab.getState().text);
          }}
        >
          {busy ? 'Scoring…' : 'Re-score with editor code'}
        </button>
      </div>
      {note && <p className="muted small" data-testid="rescore-note">{note}</p>}
      {error && (
        <div className="reward-lab-error" role="alert" data-testid="rescore-error">
          {error.message}
        </div>
      )}
      {/*
        A box of fixed size from the freeze on (CSS contain: strict): the answer renders inside it
        without moving or repainting the dashboard below, which cost the page ~40 ms of layout
        and paint per answer when the section grew.
      */}
      {frozen && (
        <div className="rescore-box">
          {!answer && <p className="muted small">{busy ? 'Scoring in the re-score worker…' : 'Edit the terms above, then re-score: the answer appears here.'}</p>}
          {answer && <Answer frozen={frozen} answer={answer} edited={edited} />}
        </div>
      )}
    </section>
  );
}
