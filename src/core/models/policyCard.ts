/**
 * policy.json: what an exported policy.onnx needs beside it to be used without this repository:
 * its inputs and outputs (names, types, shapes), how to build the input from an env observation,
 * the action names (or the token vocabulary), the env it was trained on, and the reward-code
 * hash. Written by the CLI and the Runs view's ONNX export alike (pure: no I/O).
 */
import { makeEnv } from '../envs/index.ts';
import { COLOR_NAMES, OBJ_NAMES } from '../envs/grid/objects.ts';
import { DIR_NAMES } from '../envs/grid/view.ts';
import { CELL_COLORS, CELL_STATES, CELL_TYPES } from '../rollout/features.ts';
import { stageConfig, stageStarts, type RunConfig } from '../presets/schema.ts';
import { probeShapeFor } from '../engine/shape.ts';
import { vectorBox } from '../rollout/stepPool.ts';
import { buildPolicyGraph } from './policyGraph.ts';
import { TransformerPolicy } from './transformer.ts';
import { VOCAB } from '../text/codec.ts';

export const POLICY_CARD_FORMAT = 'agentic-rl-playground/policy';
export const POLICY_CARD_VERSION = 1;

/** One ONNX input or output. */
export interface TensorCard {
  name: string;
  dtype: string;
  shape: readonly number[];
}

export interface PolicyCard {
  format: typeof POLICY_CARD_FORMAT;
  version: number;
  env: { id: string; kwargs: Record<string, unknown>; title: string };
  model: RunConfig['model'];
  algo: string;
  seed: number;
  /** Iterations trained when the policy was exported. */
  iteration: number;
  /** The reward code in force (SHA-256, first 12 hex digits, as the CLI and the Runs view print it), or null without user terms. */
  rewardCodeHash: string | null;
  onnx: { inputs: TensorCard[]; outputs: TensorCard[]; notes: string };
  /** How to build the input from an env observation. */
  observation: Record<string, unknown>;
  /** Action ids → names (grid), or the token vocabulary (token policies). */
  actions: { kind: 'discrete'; names: readonly string[] } | { kind: 'tokens'; vocabulary: readonly string[] };
}

/** The state names of a grid cell's third byte (doors; other objects use 0). */
const STATE_NAMES = ['open', 'closed', 'locked'] as const;

/**
 * The card for the policy a run exports after `iteration` iterations (`stage`, 0-based: the
 * stage a checkpoint was saved in, when known).
 */
export function policyCard(config: RunConfig, o: { iteration: number; rewardCodeHash: string | null; stage?: number }): PolicyCard {
  // A staged run's policy is its current stage's (a distill stage's: the student): the stage the
  // last trained iteration (1-based: `iteration`) belongs to, unless the checkpoint says.
  const starts = stageStarts(config.stages);
  const stage = o.stage ?? Math.max(0, starts.filter((s) => s <= Math.max(1, o.iteration)).length - 1);
  const run = config.stages.length > 0 ? stageConfig(config, stage) : config;
  const env = makeEnv(run.env.id, run.env.kwargs);
  const { model } = probeShapeFor(run);
  const transformer = model instanceof TransformerPolicy;
  const g = transformer ? model.buildDecodeGraph(1, 1) : buildPolicyGraph(model, 1);
  const params = new Set(g.params.map((t) => t.name));
  const io = (ts: readonly { name: string; dtype: string; shape: readonly number[] }[]) => ts.map((t) => ({ name: t.name, dtype: t.dtype, shape: [...t.shape] }));
  const inputs = io(g.inputs.filter((t) => !params.has(t.name)));
  const outputs = io(g.outputs);
  const space = env.spec.actionSpace;
  const base = {
    format: POLICY_CARD_FORMAT,
    version: POLICY_CARD_VERSION,
    env: { id: run.env.id, kwargs: { ...run.env.kwargs }, title: env.spec.title },
    model: run.model,
    algo: run.algo.algo,
    seed: run.seed,
    iteration: o.iteration,
    rewardCodeHash: o.rewardCodeHash,
  } as const;
  if (transformer) {
    return {
      ...base,
      onnx: {
        inputs,
        outputs,
        notes: 'The KV-cache decode step a rollout runs: one new token per call. Feed the prompt token by token (or the tokens of the observation text), carrying the cache outputs into the next call\'s cache inputs, and sample the next token from the log-probabilities; an action ends at the end-of-action token.',
      },
      observation: {
        kind: 'tokens',
        how: "The env's observation text (and the transcript so far), encoded character by character with the vocabulary below; multi-character entries are whole tokens the tokenizer prefers.",
      },
      actions: { kind: 'tokens', vocabulary: VOCAB },
    };
  }
  const obsDim = inputs[0]?.shape[1] ?? 0;
  const names = { kind: 'discrete' as const, names: space.kind === 'discrete' ? (space.labels ?? Array.from({ length: space.n }, (_, i) => String(i))) : [] };
  const onnx = {
    inputs,
    outputs,
    notes: `One observation per call: obs float32 [1, ${obsDim}] in, log π(a | obs) over the ${space.kind === 'discrete' ? space.n : '?'} actions out${outputs.length > 1 ? " (and the value head's estimate)" : ''}. Take exp() for probabilities; argmax for greedy play.`,
  };
  const vec = vectorBox(env.spec);
  if (vec) {
    return {
      ...base,
      onnx,
      observation: {
        kind: 'vector',
        shape: [...vec.shape],
        floats: obsDim,
        low: vec.perElement ? [...vec.perElement.low] : vec.low,
        high: vec.perElement ? [...vec.perElement.high] : vec.high,
        how: `The env's observation is a Box of ${obsDim} floats (shape [${vec.shape}]), flattened row-major: feed it as it is, no scaling.`,
      },
      actions: names,
    };
  }
  const perCell = CELL_TYPES + CELL_COLORS + CELL_STATES;
  const viewSize = Math.round(Math.sqrt((obsDim - 4) / perCell));
  return {
    ...base,
    onnx: {
      inputs,
      outputs,
      notes: `One observation per call: obs float32 [1, ${obsDim}] in, log π(a | obs) over the ${space.kind === 'discrete' ? space.n : '?'} actions out${outputs.length > 1 ? ' (and the value head\'s estimate)' : ''}. Take exp() for probabilities; argmax for greedy play.`,
    },
    observation: {
      kind: 'grid-one-hot',
      viewSize,
      floats: obsDim,
      how: `The env's observation is an egocentric ${viewSize}×${viewSize} view (image: ${viewSize * viewSize} cells × 3 bytes: object type, colour, state; row-major, row 0 farthest ahead, the agent in the bottom row's centre) and a heading. Cell c (0..${viewSize * viewSize - 1}) fills floats [20c, 20c + 20): one-hot object type (11), then one-hot colour (6), then one-hot state (3); the last 4 floats are the one-hot heading. Everything else is 0.`,
      layout: [
        { floats: [0, viewSize * viewSize * perCell], what: `${viewSize * viewSize} cells × (${CELL_TYPES} type + ${CELL_COLORS} colour + ${CELL_STATES} state), one-hot` },
        { floats: [viewSize * viewSize * perCell, obsDim], what: 'heading, one-hot' },
      ],
      cellTypes: OBJ_NAMES,
      cellColors: COLOR_NAMES,
      cellStates: STATE_NAMES,
      headings: DIR_NAMES,
    },
    actions: { kind: 'discrete', names: space.kind === 'discrete' ? (space.labels ?? Array.from({ length: space.n }, (_, i) => String(i))) : [] },
  };
}
