/**
 * "Watch a trained agent": plays the shipped policy for this env (public/agents/, made by
 * `npm run train-agents`) on the episode in view, one action per tick at the expert's speed, and
 * shows what the policy thought at each step: the probability of every action, the chosen one
 * marked. Sampled (how it was trained to act) or greedy (always the likeliest action), so a
 * student can see why a policy that succeeds when sampling may loop forever when greedy.
 */
import { useEffect, useRef, useState } from 'react';
import { transfer } from 'comlink';
import { chooseAgentAction, type AgentMode } from '../../core/agents/act.ts';
import { agentFor, type AgentManifest, type MlpAgent, type TokenAgent } from '../../core/agents/manifest.ts';
import type { EnvSpec, GridObs } from '../../core/envs/types.ts';
import { encodeGridObs } from '../../core/rollout/features.ts';
import { isOver } from '../state/episode.ts';
import { useStore } from '../store.ts';
import { agentPolicy, loadAgentManifest } from './agentClient.ts';
import { keepFocus } from './EpisodeControls.tsx';
import { useWatchLoop } from './useWatchLoop.ts';
import { ToolAgentPanel } from './ToolAgentPanel.tsx';
import { ActionProbs, MlpAgentFacts, NoAgent } from './AgentNotes.tsx';

interface Choice {
  /** The episode it was made in (a new episode hides it). */
  envId: string | null;
  seed: number;
  /** Steps taken when the policy was asked (the decision was for this state). */
  step: number;
  action: number;
  probs: number[];
}

/** One decision of `agent` on the episode in view; null when there is nothing to do (over, or changed meanwhile). */
async function decide(agent: MlpAgent, mode: AgentMode): Promise<Choice | null> {
  const { episode } = useStore.getState();
  if (!episode || isOver(episode)) return null;
  const obs = episode.snapshots[episode.snapshots.length - 1].obs as GridObs;
  const features = new Float32Array(agent.model.obsDim);
  encodeGridObs(obs, features);
  const policy = await agentPolicy(agent);
  const logprobs = await policy.logprobs(transfer(features, [features.buffer]));
  // A reset, a key press or a rewind while the policy ran: that state is gone, act on nothing.
  if (useStore.getState().episode !== episode) return null;
  const c = chooseAgentAction(logprobs, mode, episode.seed, episode.steps.length);
  return { envId: useStore.getState().envId, seed: episode.seed, step: episode.steps.length, ...c };
}

/** The shipped grid agent's last decision on the episode in view, and one step of it. */
function useMlpAgent(agent: AgentManifest['agents'][number] | null, mode: AgentMode) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [choice, setChoice] = useState<Choice | null>(null);
  const modeRef = useRef(mode);
  useEffect(() => {
    modeRef.current = mode;
  }, [mode]);

  const step = async (): Promise<boolean> => {
    if (!agent) return false;
    setBusy(true);
    try {
      const c = await decide(agent as MlpAgent, modeRef.current);
      if (!c) return false;
      setChoice(c);
      setError(null);
      return useStore.getState().act(c.action, 'agent');
    } catch (e) {
      setError(`The agent could not act: ${(e as Error).message}`);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, choice, step };
}

export function AgentControls({ spec }: { spec: EnvSpec }) {
  const envId = useStore((s) => s.envId);
  const kwargs = useStore((s) => s.kwargs);
  const episode = useStore((s) => s.episode);
  const [manifest, setManifest] = useState<AgentManifest | Error | null>(null);
  const [mode, setMode] = useState<AgentMode>('sampled');
  const [watching, setWatching] = useState(false);

  useEffect(() => {
    loadAgentManifest().then(setManifest, (e: Error) => setManifest(e));
  }, []);

  const agent = manifest && !(manifest instanceof Error) && envId ? agentFor(manifest, envId, kwargs) : null;
  const over = !episode || isOver(episode);
  const { busy, error, choice, step } = useMlpAgent(agent, mode);

  // The last decision shows while its episode is in view and not rewound past it.
  const shown = choice && episode && choice.envId === envId && choice.seed === episode.seed && choice.step < episode.steps.length ? choice : null;

  useWatchLoop(watching && agent?.model.kind === 'mlp', agent, step, () => setWatching(false));

  if (manifest instanceof Error) {
    return (
      <p className="trained-agent-none muted small" data-testid="agent-none" role="alert">
        No trained agents: {manifest.message}
      </p>
    );
  }
  if (!manifest) return null;
  if (!agent) return <NoAgent manifest={manifest} envId={envId} seed={episode?.seed} />;
  if (agent.model.kind === 'transformer') return <ToolAgentPanel agent={agent as TokenAgent} spec={spec} />;

  const labels = spec.actionSpace.kind === 'discrete' ? (spec.actionSpace.labels ?? []) : [];
  return (
    <section className="trained-agent" data-testid="agent-panel" data-agent={agent.file} aria-label="Trained agent">
      <div className="controls" role="toolbar" aria-label="Trained agent">
        <button
          type="button"
          className={`btn btn-agent ${watching ? 'btn-active-agent' : ''}`}
          data-testid="agent-watch"
          aria-pressed={watching}
          onClick={() => {
            useStore.getState().setPlaying(false);
            setWatching(!watching);
          }}
          disabled={over && !watching}
          {...keepFocus}
          title="Let the trained agent play this episode, at the speed set for the expert"
        >
          {watching ? '❚❚ Pause agent' : '▶ Watch a trained agent'}
        </button>
        <button type="button" className="btn btn-agent" data-testid="agent-step" onClick={() => void step()} disabled={over || watching || busy} {...keepFocus} title="Let the trained agent take one action">
          Step agent
        </button>
        <label className="trained-agent-mode" title="Sampled: draw from the policy, as in training. Greedy: always the likeliest action.">
          <span>acts</span>
          <select data-testid="agent-mode" value={mode} onChange={(e) => setMode(e.target.value as AgentMode)} {...keepFocus}>
            <option value="sampled">sampled</option>
            <option value="greedy">greedy</option>
          </select>
        </label>
      </div>
      <MlpAgentFacts agent={agent as MlpAgent} />
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {shown && <ActionProbs step={shown.step} action={shown.action} probs={shown.probs} labels={labels} />}
    </section>
  );
}
