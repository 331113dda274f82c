/**
 * The env studio's code worker: everything the Code tab runs on a user's env module happens here,
 * never on the page — the check on save, play by hand, the random agent. The module runs in the
 * QuickJS sandbox (./quickjs.ts) inside this worker, so a slow step never blocks the page and a
 * loop is stopped at its deadline.
 *
 * Main thread: `wrap<CodeStudioApi>(new Worker(new URL('.../codeEnv/studioWorker.ts', import.meta.url), { type: 'module' }))`.
 */
import { expose } from 'comlink';
import { checkCodeEnv, makeCodeEnv, type CodeEnv, type CodeEnvProblem } from '../../core/envs/code/index.ts';
import type { Frame } from '../../core/envs/types.ts';
import { Rng } from '../../core/util/rng.ts';
import { loadCodeEnvs } from './index.ts';

/** What the page needs to know of a checked env. */
export interface StudioSpec {
  title: string;
  description: string;
  family: 'grid' | 'tool';
  actions: string[];
  maxSteps: number;
}

export interface StudioCheck {
  problems: CodeEnvProblem[];
  spec: StudioSpec | null;
}

/** One moment of a hand-played episode. */
export interface StudioView {
  frame: Frame;
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

function view(e: CodeEnv, reward: number, done: boolean, success: boolean | null): StudioView {
  return { frame: e.frame(), text: e.renderText(), step: e.stepCount, reward, returnSoFar: ret, done, success };
}

/** A random action: uniform over a grid env's set; for a text env, one of its calls with a small number. */
function randomAction(e: CodeEnv, rng: Rng): number | string {
  const names = e.meta.actions;
  return e.spec.family === 'grid' ? rng.int(0, names.length) : `${rng.choice(names)}(${rng.int(0, 100)})`;
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
    return { problems: r.problems, spec: { title: spec.title, description: spec.description, family: spec.family, actions: labels.length > 0 ? labels : meta.actions, maxSteps: spec.maxSteps } };
  },

  /** Starts a hand-played episode of `code` from `seed`. */
  async play(code: string, seed: number): Promise<StudioView> {
    await loadCodeEnvs();
    env = makeCodeEnv({ code });
    env.reset({ seed });
    ret = 0;
    return view(env, 0, false, null);
  },

  /** One step of the hand-played episode. */
  act(action: number | string): StudioView {
    if (env === null) throw new Error('press Play first');
    const r = env.step(action);
    ret += r.reward;
    const done = r.terminated || r.truncated;
    return view(env, r.reward, done, done ? r.info.success === true : null);
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
