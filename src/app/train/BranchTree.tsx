/**
 * Tree rollouts in the trajectory inspector: the rollout tree the shown episode belongs to, as
 * nested lists (the trunk, then per branch point the branches started there), each leaf with its
 * outcome, reward and advantage, and a button that opens it. Nothing is drawn for an episode
 * that neither branched nor was branched from.
 */
import type { EpisodeView } from '../../runtime/trainWorker/types.ts';
import { useStore } from '../store.ts';
import { fmt } from '../ui/MetricChart.tsx';

const outcome = (e: EpisodeView) => (e.success ? '✓ solved' : e.truncated ? 'truncated' : '✕ not solved');

function Leaf({ episodes, i, current, label }: { episodes: readonly EpisodeView[]; i: number; current: number; label: string }) {
  const pick = useStore((s) => s.inspectEpisode);
  const e = episodes[i];
  return (
    <button type="button" className={`link-btn ${i === current ? 'tree-on' : ''}`} aria-current={i === current} data-testid={`tree-leaf-${i}`} onClick={() => pick(i, true)}>
      {label} {i + 1}: {outcome(e)} · reward {fmt(e.reward)} · advantage {e.advantage >= 0 ? '+' : ''}
      {fmt(e.advantage)}
    </button>
  );
}

export function BranchTree({ episodes, index }: { episodes: readonly EpisodeView[]; index: number }) {
  const ep = episodes[index];
  const trunk = ep.kind === 'tokens' && ep.branch ? ep.branch.trunk : index;
  const kids = episodes.flatMap((e, i) => (e.kind === 'tokens' && e.branch?.trunk === trunk ? [{ i, turn: e.branch.turn }] : []));
  if (kids.length === 0) return null;
  const turns = [...new Set(kids.map((k) => k.turn))].sort((a, b) => a - b);
  return (
    <nav className="branch-tree" aria-label="Rollout tree" data-testid="branch-tree">
      <ul>
        <li>
          <Leaf episodes={episodes} i={trunk} current={index} label="Trunk, episode" />
          <ul>
            {turns.map((t) => (
              <li key={t}>
                <span className="muted small">branched at turn {t} (its prefix trained once, with the mean advantage of these leaves and the trunk):</span>
                <ul>
                  {kids
                    .filter((k) => k.turn === t)
                    .map((k) => (
                      <li key={k.i}>
                        <Leaf episodes={episodes} i={k.i} current={index} label="Branch, episode" />
                      </li>
                    ))}
                </ul>
              </li>
            ))}
          </ul>
        </li>
      </ul>
    </nav>
  );
}
