/**
 * A shipped token agent (a tool env's transformer) playing one episode for the Environments view.
 * The episode is decoded by the same lockstep loop that training and the held-out eval use
 * (rollout/tokenLockstep.ts, one row), so what the viewer shows is what `--eval` scored. The
 * result is the agent's plan for that seed: its action texts, turn by turn, with the probability
 * of every token it wrote, which the page then replays in its own copy of the env at a watchable
 * pace (an env's only randomness is its seed, so both copies see the same replies).
 *
 * A grid env's token agent (grid/memory) plays the grid as text (envs/grid/textAdapter.ts): its
 * actions are letters, which the page's grid, played with grid actions, receives through
 * `envActionOf`.
 */
import type { TokenDecoder } from '../engine/types.ts';
import { parseGridAction } from '../envs/grid/textAdapter.ts';
import { envFamily } from '../envs/families.ts';
import { ACTION } from '../envs/grid/world.ts';
import type { EnvSpec, ToolEnv } from '../envs/types.ts';
import { collectTokenEpisodes } from '../rollout/tokenLockstep.ts';
import type { TokenEpisode } from '../rollout/tokenEpisode.ts';
import { EOA, tokenText } from '../text/codec.ts';
import { mixSeed, Rng } from '../util/rng.ts';
import type { AgentMode } from './act.ts';

/** One token the agent wrote: its text (`<eoa>` for the end of an action) and π(token | context). */
export interface AgentToken {
  text: string;
  prob: number;
}

export interface AgentTurn {
  /** The action text the env received. */
  action: string;
  /** The tokens sampled for it, in order (its <eoa> last, unless the action was cut at the limit). */
  tokens: AgentToken[];
}

export interface AgentPlan {
  seed: number;
  mode: AgentMode;
  turns: AgentTurn[];
  /** As the decoding loop scored it (the page's replay shows the env's own verdict). */
  success: boolean;
  /** The context ran out before the env ended the episode. */
  contextLimited: boolean;
}

/**
 * Splits an episode's policy tokens into its turns: each action's tokens run from the first
 * policy token after environment tokens to its <eoa> (or to the next environment token when the
 * action was cut at `maxActionTokens`).
 */
export function planFromEpisode(ep: TokenEpisode, mode: AgentMode): AgentPlan {
  const turns: AgentTurn[] = [];
  let cur: AgentToken[] | null = null;
  const close = () => {
    if (cur) turns.push({ action: ep.actions[turns.length] ?? '', tokens: cur });
    cur = null;
  };
  for (let i = 0; i < ep.tokens.length; i++) {
    if (ep.lossMask[i] !== 1) {
      close();
      continue;
    }
    cur ??= [];
    cur.push({ text: tokenText(ep.tokens[i]), prob: Math.exp(ep.logprobs[i]) });
    if (ep.tokens[i] === EOA) close();
  }
  // An action still open when the context ran out never reached the env: it is not a turn.
  if (cur && turns.length < ep.actions.length) close();
  return { seed: ep.seed, mode, turns: turns.slice(0, ep.actions.length), success: ep.success, contextLimited: ep.contextLimited };
}

/**
 * Plays `env` from `seed` with `decoder` (batch 1): sampled at temperature 1, as trained, or
 * greedy. The sampling stream is seeded by the episode seed, so the same seed and mode give the
 * same plan every time.
 */
export async function playTokenAgent(decoder: TokenDecoder, env: ToolEnv, seed: number, mode: AgentMode, maxActionTokens: number): Promise<AgentPlan> {
  const { episodes } = await collectTokenEpisodes({
    envs: [env],
    seeds: [seed],
    groups: [-1],
    decoder,
    rng: new Rng(mixSeed(seed, 0x7a9e)),
    temperature: mode === 'greedy' ? 0 : 1,
    maxActionTokens,
  });
  return planFromEpisode(episodes[0], mode);
}

/**
 * What the page's env receives for a turn's action text: a grid env (the agent played it as
 * text) the grid action the letter names, a malformed letter as `done` (as GridTextEnv plays it,
 * so both copies stay in step); a tool env the text itself.
 */
export function envActionOf(family: EnvSpec['family'], action: string): string | number {
  return envFamily(family).textForm === 'grid-adapter' ? (parseGridAction(action) ?? ACTION.done) : action;
}
