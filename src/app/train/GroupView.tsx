/**
 * The latest batch as GRPO sees it: one row per group (episodes from one start state), each
 * rollout's reward and advantage side by side. Zero-spread groups are marked: every advantage
 * in them is 0, so they contribute nothing to the update (the learning-signal invariant).
 * REINFORCE/PPO batches have no groups: they are shown as one list of episodes.
 */
import { memo } from 'react';
import type { EpisodeView, IterationView } from '../../runtime/trainWorker/types.ts';
import { useStore } from '../store.ts';
import { fmt } from '../ui/MetricChart.tsx';

/** Rewards closer than this count as equal (matches dynamic sampling's default tolerance scale). */
const SPREAD_TOL = 1e-9;

interface Row {
  group: number;
  seed: number;
  items: { ep: EpisodeView; index: number }[];
  spread: number;
}

export function groupRows(batch: IterationView): Row[] {
  const rows = new Map<number, Row>();
  batch.episodes.forEach((ep, index) => {
    const key = ep.group;
    let r = rows.get(key);
    if (!r) rows.set(key, (r = { group: key, seed: ep.seed, items: [], spread: 0 }));
    r.items.push({ ep, index });
  });
  for (const r of rows.values()) {
    const rewards = r.items.map((i) => i.ep.reward);
    r.spread = Math.max(...rewards) - Math.min(...rewards);
  }
  return [...rows.values()].sort((a, b) => a.group - b.group);
}

/** Advantage → a diverging colour (red below 0, green above), |A| ≥ 2 saturated. */
function advColor(a: number): string {
  const t = Math.min(1, Math.abs(a) / 2);
  return a >= 0 ? `rgba(22, 128, 60, ${0.12 + 0.6 * t})` : `rgba(201, 42, 42, ${0.12 + 0.6 * t})`;
}

const Cell = memo(function Cell({ ep, index, onOpen }: { ep: EpisodeView; index: number; onOpen: (i: number) => void }) {
  return (
    <button
      type="button"
      className={`rollout ${ep.success ? 'rollout-ok' : 'rollout-fail'}`}
      style={{ background: advColor(ep.advantage) }}
      data-testid={`rollout-${index}`}
      title={`Episode ${index}: reward ${fmt(ep.reward)}, advantage ${fmt(ep.advantage)}, ${ep.actions.length} steps, ${ep.success ? 'reached the goal' : ep.truncated ? 'ran out of time' : 'ended'}. Click to replay.`}
      onClick={() => onOpen(index)}
    >
      <span className="rollout-r">{fmt(ep.reward)}</span>
      <span className="rollout-a">{ep.advantage > 0 && fmt(ep.advantage) !== '0' ? '+' : ''}{fmt(ep.advantage)}</span>
    </button>
  );
});

export function GroupView() {
  const latest = useStore((s) => s.latest);
  const open = useStore((s) => s.inspectEpisode);
  if (!latest) {
    return (
      <div className="panel placeholder">
        <h2>No batch yet</h2>
        <p>Start training or take a single step: the latest batch's groups appear here, each rollout with its reward and advantage.</p>
      </div>
    );
  }
  if (latest.episodes.length === 0) {
    return (
      <div className="panel placeholder" data-testid="group-view" data-iteration={latest.iteration + 1}>
        <h2>Iteration {latest.iteration + 1}: nothing to learn from</h2>
        <p>Every sampled group had zero reward spread and dynamic sampling hit its round cap, so this iteration made no update. Raise the group size or the max sampling rounds, or shape the reward.</p>
      </div>
    );
  }
  const rows = groupRows(latest);
  const grouped = rows.length > 0 && rows[0].group >= 0;
  const zero = rows.filter((r) => r.spread <= SPREAD_TOL).length;
  return (
    <div className="groups" data-testid="group-view" data-iteration={latest.iteration + 1} data-zero-groups={grouped ? zero : ''}>
      <div className="groups-head">
        <p>
          {grouped ? (
            <>
              Iteration <b>{latest.iteration + 1}</b>: {rows.length} groups of {rows[0].items.length} episodes, each group from one start state. Each cell shows the
              episode's <b>reward</b> and, below it, its <b>advantage</b> (reward minus the group mean{rows[0].items.length > 1 ? ', scaled' : ''}). <b className={zero ? 'txt-bad' : ''}>{zero}</b> of {rows.length} groups have
              zero spread: all their advantages are 0 and they teach nothing.
            </>
          ) : (
            <>
              Iteration <b>{latest.iteration + 1}</b>: {latest.episodes.length} episodes, each from its own start (this algorithm does not group). Cells show reward and advantage.
            </>
          )}
        </p>
        <div className="groups-legend">
          <span className="legend-swatch" style={{ background: advColor(1.5) }} /> advantage &gt; 0: pushed up
          <span className="legend-swatch" style={{ background: advColor(-1.5) }} /> &lt; 0: pushed down
          <span className="legend-swatch rollout-ok-swatch" /> reached the goal
        </div>
      </div>
      <div className="group-rows">
        {grouped
          ? rows.map((r) => (
              <div key={r.group} className={`group-row ${r.spread <= SPREAD_TOL ? 'group-zero' : ''}`} data-testid={`group-${r.group}`} data-zero={r.spread <= SPREAD_TOL}>
                <div className="group-label">
                  <b>Group {r.group + 1}</b>
                  <span className="muted small">seed {r.seed}</span>
                  {r.spread <= SPREAD_TOL ? <span className="chip chip-bad">zero spread</span> : <span className="muted small">spread {fmt(r.spread)}</span>}
                </div>
                <div className="group-cells">
                  {r.items.map(({ ep, index }) => (
                    <Cell key={index} ep={ep} index={index} onOpen={open} />
                  ))}
                </div>
              </div>
            ))
          : (
              <div className="group-row">
                <div className="group-label">
                  <b>Batch</b>
                </div>
                <div className="group-cells">
                  {latest.episodes.map((ep, index) => (
                    <Cell key={index} ep={ep} index={index} onOpen={open} />
                  ))}
                </div>
              </div>
            )}
      </div>
    </div>
  );
}
