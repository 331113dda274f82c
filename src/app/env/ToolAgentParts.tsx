/**
 * The tool-env trained agent's read-outs: what the agent is, its latest call token by token with
 * each token's probability, and how its episode ended.
 */
import type { TokenAgent } from '../../core/agents/manifest.ts';
import type { AgentPlan } from '../../core/agents/tokenAgent.ts';
import { GRID_ACTION_LETTERS } from '../../core/envs/grid/textAdapter.ts';
import { ACTION_LABELS } from '../../core/envs/grid/world.ts';

export const pct = (x: number) => `${Math.round(x * 100)}%`;

/** A grid letter's action name (`f` → forward); null for anything else. */
function letterName(text: string): string | null {
  const i = GRID_ACTION_LETTERS.indexOf(text);
  return i >= 0 ? ACTION_LABELS[i] : null;
}

export function AgentFacts({ agent, grid }: { agent: TokenAgent; grid: boolean }) {
  return (
    <p className="trained-agent-facts muted small" data-testid="agent-facts">
      {grid && (
        <>
          This agent reads the grid as text (its view, turn by turn, the whole episode kept in its context: that is how it remembers what it saw) and answers one letter per step (
          {GRID_ACTION_LETTERS.map((c, i) => `${c} ${ACTION_LABELS[i]}`).join(', ')}).{' '}
        </>
      )}
      A {agent.model.nLayers}-layer transformer (d {agent.model.dModel}, context {agent.model.context} tokens) trained by <code>{agent.preset}</code>: an imitation warm start, then {agent.iterations} RL
      iterations, seed {agent.seed}. Held-out success ({agent.eval.episodes} unseen seeds): <strong>sampled {pct(agent.eval.sampled)}</strong>, greedy {pct(agent.eval.greedy)}. Sampled draws each token from the policy's probabilities, as in training; greedy always takes the likeliest one.
    </p>
  );
}

/** The agent's call (or grid letter) at turn `played`, token by token with each token's probability. */
export function AgentTokens({ last, played, grid }: { last: AgentPlan['turns'][number]; played: number; grid: boolean }) {
  return (
    <div className="agent-tokens" data-testid="agent-tokens" data-turn={played} aria-label={grid ? `The agent's letter at step ${played}, token by token` : `The agent's call at turn ${played}, token by token`}>
      <span className="muted small">
        {grid ? `step ${played}: wrote ${last.action ? `“${last.action}”` : 'nothing valid'}${letterName(last.action) ? ` (${letterName(last.action)})` : ' (malformed: played as done)'}, token by token:` : `turn ${played}, token by token:`}
      </span>
      <ol>
        {last.tokens.map((t, i) => (
          <li key={i} className={t.prob < 0.5 ? 'unsure' : ''} title={`π = ${(t.prob * 100).toFixed(1)}%`} data-prob={t.prob.toFixed(4)}>
            <code>{t.text === '<eoa>' ? '⏎' : t.text.replace(/ /g, '␣')}</code>
            <span>{pct(t.prob)}</span>
          </li>
        ))}
      </ol>
    </div>
  );
}

/** The end of the agent's own episode; `seedNote`: the seed and mode, when an env is in view. */
export function AgentOutcome({ success, played, grid, seedNote }: { success: boolean; played: number; grid: boolean; seedNote: string | null }) {
  return (
    <p className={`agent-outcome ${success ? 'good' : 'bad'}`} data-testid="agent-outcome" data-success={String(success)} role="status">
      {grid
        ? success
          ? `✓ The agent succeeded in ${played} steps.`
          : `✗ The agent failed (${played} steps).`
        : success
          ? `✓ The agent answered correctly in ${played} calls.`
          : `✗ The agent did not get it right (${played} calls).`}
      {seedNote}
    </p>
  );
}
