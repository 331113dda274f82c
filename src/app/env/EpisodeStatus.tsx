/**
 * Where the episode stands: steps (or turns) used against the limit, reward so far, and how it
 * ended. `terminated` (a true end) and `truncated` (the time limit) are shown distinctly,
 * because a learner treats them differently (terminated: no bootstrap; truncated: bootstrap from V).
 */
import { isOver, type Episode } from '../state/episode.ts';
import type { EnvSpec } from '../../core/envs/types.ts';
import { familyOf } from '../../core/envs/families.ts';

export function formatReward(r: number): string {
  return Number.isInteger(r) ? String(r) : r.toFixed(3);
}

function outcome(ep: Episode): { state: string; text: string; tone: string; hint: string } {
  if (ep.terminated) {
    if (ep.success === true) return { state: 'terminated', text: 'Solved', tone: 'good', hint: 'terminated: a true end (success)' };
    if (ep.success === false) return { state: 'terminated', text: 'Failed', tone: 'bad', hint: 'terminated: a true end (failure)' };
    return { state: 'terminated', text: 'Ended', tone: 'neutral', hint: 'terminated: a true end' };
  }
  if (ep.truncated) {
    return { state: 'truncated', text: 'Out of time', tone: 'warn', hint: 'truncated: the step limit cut the episode short' };
  }
  return { state: 'running', text: 'Running', tone: 'live', hint: 'the episode is in progress' };
}

export function EpisodeStatus({ spec, episode }: { spec: EnvSpec; episode: Episode }) {
  const o = outcome(episode);
  const noun = familyOf(spec).stepNoun;
  const unit = noun[0].toUpperCase() + noun.slice(1);
  const used = episode.steps.length;
  const last = episode.steps[used - 1];
  return (
    <div
      className="episode-status"
      data-testid="episode-status"
      data-state={o.state}
      data-success={episode.success === null ? '' : String(episode.success)}
      data-steps={used}
      data-reward={episode.totalReward}
    >
      <span className={`badge badge-${o.tone}`} title={o.hint}>
        {o.text}
        {isOver(episode) && <span className="badge-sub">{episode.terminated ? 'terminated' : 'truncated'}</span>}
      </span>
      <span className="stat">
        <span className="stat-label">{unit}</span>
        <span className="stat-value">
          {used}
          <span className="muted"> / {spec.maxSteps}</span>
        </span>
      </span>
      <progress className="steps-bar" max={spec.maxSteps} value={used} aria-label={`${used} of ${spec.maxSteps} ${unit.toLowerCase()}s used`} />
      <span className="stat">
        <span className="stat-label">Return</span>
        <span className="stat-value">{formatReward(episode.totalReward)}</span>
      </span>
      <span className="stat">
        <span className="stat-label">Last reward</span>
        <span className="stat-value">{last ? formatReward(last.reward) : '–'}</span>
      </span>
    </div>
  );
}
