/**
 * The grid agent's read-outs beside its controls: why no trained agent plays this env (or the
 * settings one was trained with), what the agent is, and its last decision's action probabilities.
 */
import { whyNoAgent, type AgentManifest, type MlpAgent } from '../../core/agents/manifest.ts';
import { useStore } from '../store.ts';
import { keepFocus } from './EpisodeControls.tsx';
import { pct } from './ToolAgentParts.tsx';

/** No shipped agent plays this env as set: one trained on other settings (with a button to open them), or none at all, and why. */
export function NoAgent({ manifest, envId, seed }: { manifest: AgentManifest; envId: string | null; seed: number | undefined }) {
  const other = manifest.agents.find((a) => a.env === envId);
  const why = envId ? whyNoAgent(manifest, envId) : null;
  if (other && envId) {
    const settings = Object.entries(other.kwargs).map(([k, v]) => `${k} ${String(v)}`).join(', ');
    return (
      <p className="trained-agent-none trained-agent-elsewhere muted small" data-testid="agent-none" data-agent={other.file}>
        A trained agent for {envId} exists, but it learned in a different world ({settings ? `trained with ${settings}` : 'trained with the defaults'}) and only plays that one.{' '}
        <button
          type="button"
          className="btn btn-agent"
          data-testid="agent-open-settings"
          onClick={() => useStore.getState().open({ envId, seed, kwargs: other.kwargs })}
          {...keepFocus}
          title="Reopen this env, same seed, with the settings the agent was trained with"
        >
          Open with the agent&apos;s settings
        </button>
      </p>
    );
  }
  return (
    <p className="trained-agent-none muted small" data-testid="agent-none">
      {why ? `No trained agent ships for ${envId}: ${why}` : `No trained agent ships for ${envId} yet (npm run train-agents trains them; this env's run did not reach its bar).`}
    </p>
  );
}

export function MlpAgentFacts({ agent }: { agent: MlpAgent }) {
  return (
    <p className="trained-agent-facts muted small" data-testid="agent-facts">
      Trained by <code>{agent.preset}</code> on this env, {agent.iterations} iterations, seed {agent.seed}. Held-out success ({agent.eval.episodes} unseen seeds):{' '}
      <strong>sampled {pct(agent.eval.sampled)}</strong>, greedy {pct(agent.eval.greedy)}. Sampled draws each action from the policy's probabilities, as in training; greedy always takes the likeliest one, so a policy that relies on chance to get unstuck can fail greedy while it succeeds sampled.
    </p>
  );
}

/** The probability of every action at one decision, the chosen one marked. */
export function ActionProbs({ step, action, probs, labels }: { step: number; action: number; probs: readonly number[]; labels: readonly string[] }) {
  return (
    <ol className="trained-agent-probs" data-testid="agent-probs" data-step={step} data-action={action} aria-label={`Action probabilities at step ${step + 1}`}>
      {probs.map((p, a) => (
        <li key={a} className={a === action ? 'chosen' : ''} data-prob={p.toFixed(4)}>
          <span className="trained-agent-prob-label">{labels[a] ?? `action ${a}`}</span>
          <span className="trained-agent-prob-bar">
            <span style={{ height: `${(p * 100).toFixed(1)}%` }} />
          </span>
          <span className="trained-agent-prob-value">{pct(p)}</span>
        </li>
      ))}
    </ol>
  );
}
