/**
 * "Watch a trained agent" for a tool env: the shipped transformer (public/agents/) writes its
 * calls token by token in the agent worker, which decodes the whole episode for this seed with
 * the training loop's own decoder (core/agents/tokenAgent.ts). The page then plays that plan in
 * its env one turn per tick at the expert's speed, so the transcript grows call by call, and
 * shows every token of the agent's latest call with the probability it had: a confident copy of
 * a digit reads 99%, a guess reads lower.
 *
 * The plan is for the episode from its start: if the episode in view is not the agent's (a person
 * typed a call, or it is another seed), stepping the agent starts the seed over.
 *
 * A grid env's transformer (grid/memory: it reads the grid as text and keeps the whole episode in
 * its context, so it remembers the cue) is played the same way: the worker decodes the episode
 * on the text-adapted grid, and the page plays the grid action each letter names, so the grid
 * viewer animates it step by step, with the letter the agent wrote and its probability.
 */
import { useEffect, useRef, useState } from 'react';
import type { AgentMode } from '../../core/agents/act.ts';
import type { TokenAgent } from '../../core/agents/manifest.ts';
import { envActionOf, type AgentPlan } from '../../core/agents/tokenAgent.ts';
import type { EnvSpec } from '../../core/envs/types.ts';
import { familyOf } from '../../core/envs/families.ts';
import { isOver, type Episode } from '../state/episode.ts';
import { useStore } from '../store.ts';
import { agentPolicy } from './agentClient.ts';
import { keepFocus } from './EpisodeControls.tsx';
import { useWatchLoop } from './useWatchLoop.ts';
import { AgentFacts, AgentOutcome, AgentTokens } from './ToolAgentParts.tsx';

/** The agent played every step of `ep` so far, as `plan` says (so its next turn applies); a grid's steps are the grid actions its letters name. */
export function followsPlan(ep: Episode, plan: AgentPlan, family: EnvSpec['family'] = 'tool'): boolean {
  return (
    ep.seed === plan.seed && ep.steps.length <= plan.turns.length && ep.steps.every((s, i) => s.by === 'agent' && s.action === envActionOf(family, plan.turns[i].action))
  );
}

/** The agent's plan for the episode in view (decoded once per seed and mode) and one step of it. */
function useToolAgent(agent: TokenAgent, spec: EnvSpec, mode: AgentMode) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [plan, setPlan] = useState<AgentPlan | null>(null);
  const modeRef = useRef(mode);
  const planRef = useRef<Promise<AgentPlan> | null>(null);
  const planKey = useRef('');
  useEffect(() => {
    modeRef.current = mode;
  }, [mode]);

  /** The agent's plan for this seed and mode (decoded once, then reused). */
  const getPlan = (seed: number): Promise<AgentPlan> => {
    const key = `${agent.file}|${seed}|${modeRef.current}`;
    if (planKey.current !== key || !planRef.current) {
      planKey.current = key;
      const m = modeRef.current;
      planRef.current = agentPolicy(agent).then((w) => w.playTool(seed, m));
      planRef.current.catch(() => (planRef.current = null));
    }
    return planRef.current;
  };

  const step = async (): Promise<boolean> => {
    const s0 = useStore.getState();
    if (!s0.episode) return false;
    setBusy(true);
    try {
      const p = await getPlan(s0.episode.seed);
      setError(null);
      setPlan(p);
      let ep = useStore.getState().episode;
      if (!ep || ep.seed !== p.seed) return false;
      if (!followsPlan(ep, p, spec.family)) {
        useStore.getState().reset();
        ep = useStore.getState().episode!;
      }
      const turn = p.turns[ep.steps.length];
      if (!turn || isOver(ep)) return false;
      return useStore.getState().act(envActionOf(spec.family, turn.action), 'agent');
    } catch (e) {
      setError(`The agent could not act: ${(e as Error).message}`);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, plan, step };
}

export function ToolAgentPanel({ agent, spec }: { agent: TokenAgent; spec: EnvSpec }) {
  const grid = familyOf(spec).textForm === 'grid-adapter';
  const envId = useStore((s) => s.envId);
  const episode = useStore((s) => s.episode);
  const [mode, setMode] = useState<AgentMode>('sampled');
  const [watching, setWatching] = useState(false);
  const { busy, error, plan, step } = useToolAgent(agent, spec, mode);

  useWatchLoop(watching, agent, step, () => setWatching(false));
  const ours = episode && plan && followsPlan(episode, plan, spec.family) && plan.mode === mode ? plan : null;
  const played = ours ? episode!.steps.length : 0;
  const last = ours && played > 0 ? ours.turns[played - 1] : null;
  const over = !!episode && isOver(episode);
  // The agent's whole episode ended here (not a person's, not one cut short).
  const outcome = ours && over ? episode!.success : null;
  // The context filled up before the env ended the episode: the plan stops short.
  const cutShort = ours && !over && played === ours.turns.length && ours.contextLimited;

  return (
    <section className={`trained-agent trained-agent-tool ${grid ? 'trained-agent-grid-text' : ''}`} data-testid="agent-panel" data-agent={agent.file} aria-label="Trained agent">
      <div className="controls" role="toolbar" aria-label="Trained agent">
        <button
          type="button"
          className={`btn btn-agent ${watching ? 'btn-active-agent' : ''}`}
          data-testid="agent-watch"
          aria-pressed={watching}
          onClick={() => {
            useStore.getState().setPlaying(false);
            // A finished episode is watched again from its start.
            if (!watching && over) useStore.getState().reset();
            setWatching(!watching);
          }}
          {...keepFocus}
          title={`Let the trained agent play this seed from its start, one ${grid ? 'step' : 'call'} per tick at the speed set for the expert`}
        >
          {watching ? '❚❚ Pause agent' : '▶ Watch a trained agent'}
        </button>
        <button type="button" className="btn btn-agent" data-testid="agent-step" onClick={() => void step()} disabled={watching || busy || (over && !!ours)} {...keepFocus} title={grid ? 'Let the trained agent take its next step' : 'Let the trained agent make its next call'}>
          Step agent
        </button>
        <label className="trained-agent-mode" title="Sampled: draw every token from the policy, as in training. Greedy: always the likeliest token.">
          <span>writes</span>
          <select data-testid="agent-mode" value={mode} onChange={(e) => setMode(e.target.value as AgentMode)} disabled={watching} {...keepFocus}>
            <option value="sampled">sampled</option>
            <option value="greedy">greedy</option>
          </select>
        </label>
      </div>
      <AgentFacts agent={agent} grid={grid} />
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {busy && !ours && <p className="muted small">{grid ? 'The agent is choosing its moves…' : 'The agent is writing its calls…'}</p>}
      {last && <AgentTokens last={last} played={played} grid={grid} />}
      {outcome !== null && <AgentOutcome success={outcome} played={played} grid={grid} seedNote={envId ? ` Seed ${episode!.seed}, ${mode}.` : null} />}
      {cutShort && (
        <p className="agent-outcome bad" data-testid="agent-outcome" data-success="false" role="status">
          ✗ The agent's context ({agent.model.context} tokens) filled up after {played} {grid ? 'steps, before the episode ended' : 'calls, before it answered'}.
        </p>
      )}
    </section>
  );
}
