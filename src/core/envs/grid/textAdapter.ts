/**
 * A grid world as a multi-turn text env, for token policies (every env offers a text rendering,
 * so grid envs can also train a transformer on text observations).
 *
 * Observation: the grid's own egocentric view text (`GridObs.text`, e.g. `#.K\n#..\n#^.\ncolors: Ky`),
 * nothing else: no mission line (constant per env) and no heading (the MLP's structured
 * observation has it; a text policy infers it from the views it has seen, which is the point of
 * giving it a multi-step context).
 *
 * Action: exactly one letter (the policy then ends the action with <eoa>):
 *
 *     l left   r right   f forward   p pickup   d drop   t toggle   n done (no-op)
 *
 * Parsing is strict: anything else (an empty action, a word, an upper-case letter, a letter with
 * spaces) is malformed. A malformed action is played as the no-op `done`, so it still costs a
 * step (the env's clock and its step-discounted reward run on, and `maxSteps` still ends the
 * episode), and it is flagged `info.malformed` for the `format` shaping term and the metrics,
 * as tool envs do. Reward, termination and truncation are the grid env's own.
 */
import { CHARSET } from '../../text/codec.ts';
// The envs index, not the bare registry: makeTextEnv must find every built-in env registered.
import { makeEnv, type EnvKwargs } from '../index.ts';
import { familyOf } from '../families.ts';
import { dict, text } from '../spaces.ts';
import type { EnvSpec, Frame, GridEnv, Info, ResetOptions, ResetResult, StepResult, ToolEnv, ToolObs } from '../types.ts';
import { ACTION, ACTION_LABELS } from './world.ts';

/** The letter that names each grid action, indexed by action id (ACTION_LABELS order). */
export const GRID_ACTION_LETTERS: readonly string[] = ['l', 'r', 'f', 'p', 'd', 't', 'n'];

/** Longest action string the text space admits (longer ones are malformed like any other). */
export const GRID_TEXT_MAX_ACTION = 8;

/** The grid action a text action names, or null when it is malformed. */
export function parseGridAction(action: string): number | null {
  const i = GRID_ACTION_LETTERS.indexOf(action);
  return action.length === 1 && i >= 0 ? i : null;
}

export class GridTextEnv implements ToolEnv {
  readonly spec: EnvSpec;

  constructor(readonly grid: GridEnv) {
    const g = grid.spec;
    const obsText = g.observationSpace.kind === 'dict' ? g.observationSpace.spaces.text : undefined;
    if (obsText?.kind !== 'text') throw new TypeError(`GridTextEnv: ${g.id} has no text observation`);
    const legend = GRID_ACTION_LETTERS.map((c, i) => `${c} ${ACTION_LABELS[i]}`).join(', ');
    this.spec = {
      ...g,
      description: `${g.description} Played as text: the agent reads its view and answers one letter per step (${legend}).`,
      observationSpace: dict({ text: obsText }),
      actionSpace: text(GRID_TEXT_MAX_ACTION, CHARSET),
    };
  }

  reset(opts?: ResetOptions): ResetResult<ToolObs> {
    const r = this.grid.reset(opts);
    return { obs: { text: r.obs.text }, info: r.info };
  }

  step(action: string): StepResult<ToolObs> {
    const a = parseGridAction(action);
    const r = this.grid.step(a ?? ACTION.done);
    const info: Info = a === null ? { ...r.info, malformed: true } : r.info;
    return { obs: { text: r.obs.text }, reward: r.reward, terminated: r.terminated, truncated: r.truncated, info };
  }

  renderText(): string {
    return this.grid.renderText();
  }

  frame(): Frame {
    return this.grid.frame();
  }

  expertAction(): string | null {
    const a = this.grid.expertAction();
    return a === null ? null : GRID_ACTION_LETTERS[a];
  }
}

/**
 * The env a token policy plays: a text (tool) env as registered, a grid env through
 * GridTextEnv. Throws for families with no text form.
 */
export function makeTextEnv(id: string, kwargs?: EnvKwargs): ToolEnv {
  const env = makeEnv(id, kwargs);
  const form = familyOf(env.spec).textForm;
  if (form === 'native') return env as ToolEnv;
  if (form === 'grid-adapter') return new GridTextEnv(env as GridEnv);
  throw new TypeError(`makeTextEnv: ${id} is a ${String(env.spec.family)} env, with no text form`);
}
