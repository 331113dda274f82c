/**
 * The env studio's code worker: everything the Code tab runs on a user's env module happens here,
 * never on the page — the check on save, play by hand, the random agent. The module runs in the
 * QuickJS sandbox (./quickjs.ts) inside this worker, so a slow step never blocks the page and a
 * loop is stopped at its deadline.
 *
 * Main thread: `wrap<CodeStudioApi>(new Worker(new URL('.../codeEnv/studioWorker.ts', import.meta.url), { type: 'module' }))`.
 */
import { expose } from 'comlink';
import { checkCodeEnv, exportLine, makeCodeEnv, type CodeEnv, type CodeEnvProblem } from '../../core/envs/code/index.ts';
import type { Frame } from '../../core/envs/types.ts';
import { familyOf, type EnvFamilyName } from '../../core/envs/families.ts';
import { Rng } from '../../core/util/rng.ts';
import { loadCodeEnvs } from './index.ts';

/** What the page needs to know of a checked env. */
export interface StudioSpec {
  title: string;
  description: string;
  family: EnvFamilyName;
  /** What the module observes: a grid view, a text, or a vector (a Box of floats; family 'grid'). */
  observation: 'grid' | 'text' | 'vector';
  /** A vector observation's element names (env.observation.labels), else null. */
  vectorLabels: string[] | null;
  actions: string[];
  maxSteps: number;
  /** Whether the module exports `expert()` (the Expert button plays it). */
  hasExpert: boolean;
}

export interface StudioCheck {
  problems: CodeEnvProblem[];
  spec: StudioSpec | null;
}

/** One moment of a hand-played episode. */
export interface StudioView {
  frame: Frame;
  /** A vector env's current observation (plain numbers), else null. */
  vector: number[] | null;
  /** The action just taken (index, or a text env's string), null at the start. */
  action: number | string | null;
  text: string;
  step: number;
  reward: number;
  returnSoFar: number;
  done: boolean;
  success: boolean | null;
}

export interface RandomAgentResult {
  episodes: number;
  successRate: number;
  meanReturn: number;
  meanLength: number;
}

let env: CodeEnv | null = null;
let ret = 0;

let lastVector: number[] | null = null;

function view(e: CodeEnv, reward: number, done: boolean, success: boolean | null, action: number | string | null = null): StudioView {
  return { frame: e.frame(), vector: lastVector, action, text: e.renderText(), step: e.stepCount, reward, returnSoFar: ret, done, success };
}

/** The vector of an observation (vector envs), kept for the view. */
function keepVector(obs: unknown): void {
  lastVector = typeof obs === 'object' && obs !== null && 'vector' in obs ? Array.from((obs as { vector: Float32Array }).vector) : null;
}

/** One step of the hand-played episode (by the person or the expert). */
function stepWith(action: number | string): StudioView {
  if (env === null) throw new Error('press Play first');
  const r = env.step(action);
  keepVector(r.obs);
  ret += r.reward;
  const done = r.terminated || r.truncated;
  return view(env, r.reward, done, done ? r.info.success === true : null, action);
}

/** A random action: uniform over a grid env's set; for a text env, one of its calls with a small number. */
function randomAction(e: CodeEnv, rng: Rng): number | string {
  const names = e.meta.actions;
  return familyOf(e.spec).action === 'discrete' ? rng.int(0, names.length) : `${rng.choice(names)}(${rng.int(0, 100)})`;
}

const api = {
  async check(code: string): Promise<StudioCheck> {
    await loadCodeEnvs();
    env = null;
    const r = checkCodeEnv(code);
    const spec = r.spec;
    if (spec === null) return { problems: r.problems, spec: null };
    const labels = spec.actionSpace.kind === 'discrete' ? [...(spec.actionSpace.labels ?? [])] : [];
    const meta = makeCodeEnv({ code }).meta;
    const ob = meta.observation;
    return {
      problems: r.problems,
      spec: {
        title: spec.title,
        description: spec.description,
        family: spec.family,
        observation: ob.kind,
        vectorLabels: ob.kind === 'vector' ? (ob.labels ?? null) : null,
        actions: labels.length > 0 ? labels : meta.actions,
        maxSteps: spec.maxSteps,
        hasExpert: exportLine(code, 'expert') !== null,
      },
    };
  },

  /** Starts a hand-played episode of `code` from `seed`. */
  async play(code: string, seed: number): Promise<StudioView> {
    await loadCodeEnvs();
    env = makeCodeEnv({ code });
    keepVector(env.reset({ seed }).obs);
    ret = 0;
    return view(env, 0, false, null);
  },

  /** One step of the hand-played episode. */
  act(action: number | string): StudioView {
    return stepWith(action);
  },

  /**
   * The module's expert() plays the hand-played episode: `steps` of its actions (fewer when the
   * episode ends); throws, naming why, when it has no expert or the expert gives no action here.
   */
  expert(steps: number): StudioView {
    if (env === null) throw new Error('press Play first');
    let out: StudioView | null = null;
    for (let k = 0; k < steps; k++) {
      const a = env.expertAction();
      if (a === null) {
        if (out) return out;
        throw new Error(exportLine(env.code, 'expert') === null ? 'This module exports no expert(): add `export function expert()` returning the next action of a good policy.' : 'expert() returned null here: it has no action for this state.');
      }
      out = stepWith(a);
      if (out.done) break;
    }
    return out!;
  },

  /** A uniformly random agent over seeds 0..episodes−1: how often it succeeds. */
  async random(code: string, episodes: number): Promise<RandomAgentResult> {
    await loadCodeEnvs();
    const e = makeCodeEnv({ code });
    let wins = 0, total = 0, steps = 0;
    for (let seed = 0; seed < episodes; seed++) {
      const rng = new Rng(seed ^ 0x7a11);
      e.reset({ seed });
      for (;;) {
        const r = e.step(randomAction(e, rng));
        total += r.reward;
        steps++;
        if (r.terminated || r.truncated) {
          if (r.info.success === true) wins++;
          break;
        }
      }
    }
    return { episodes, successRate: wins / episodes, meanReturn: total / episodes, meanLength: steps / episodes };
  },
};

export type CodeStudioApi = typeof api;
expose(api);
