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
import { buildPolicyGraph } from '../models/policyGraph.ts';
import { TransformerPolicy } from '../models/transformer.ts';
import { BOS, EOA, OBS, PAD, SPECIAL_TOKENS, UNK, VOCAB, WORD_TOKENS } from '../text/codec.ts';

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

/** Special tokens at the head of the vocabulary (<pad> <bos> <eoa> <obs> <unk>). */
const SPECIAL_COUNT = SPECIAL_TOKENS.length;

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
  if (transformer) return { ...base, ...tokenSections(run, model, inputs, outputs) };
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

/**
 * The token policy's card: everything a script needs to run it from policy.onnx alone (the
 * context framing, the tokenizer rule, what `pos` and the cache tensors mean, how an action ends).
 * Framing as rollout/tokenEpisode.ts builds it; tokenizer as text/codec.ts encodes.
 */
function tokenSections(run: RunConfig, model: TransformerPolicy, inputs: TensorCard[], outputs: TensorCard[]): Pick<PolicyCard, 'onnx' | 'observation' | 'actions'> {
  const tmax = model.config.context;
  const cache = inputs.find((t) => t.name.startsWith('past.k.'))?.shape ?? [];
  const first = SPECIAL_COUNT + WORD_TOKENS.length;
  return {
    onnx: {
      inputs,
      outputs,
      notes: `The KV-cache decode step a rollout runs: one token per call. tokens int32 [1, 1]: the token at position pos; pos int32 [1]: its 0-based position in the episode's context (0 for <bos>, then 1, 2, … up to ${tmax - 1}). past.k.<layer> / past.v.<layer> float32 [1, heads, ${tmax}, head dim] (here [${cache.join(', ')}]): the keys and values of every position so far; start each episode with zeros and pass each call's present.k.<layer> / present.v.<layer> as the next call's past (the call writes position pos and attends to positions 0..pos). logprobs float32 [1, 1, ${VOCAB.length}]: log π(next token | context up to pos).${outputs.some((o) => o.name === 'value') ? ' value: the value head at pos.' : ''}`,
    },
    observation: {
      kind: 'tokens',
      how: "The context is one episode: <bos> <obs> task text, then per turn the policy's action tokens ending with <eoa>, then <obs> and the env's reply text, and so on. Feed every context token in order (one call each); after the last one, sample the action from logprobs token by token, feeding each sampled token back, until <eoa> (or maxActionTokens tokens: a forced end, no <eoa> in the context). The action's text is its tokens' strings joined (<eoa> left out); send it to the env, append <obs> and the reply's tokens, and sample the next action.",
      framing: { episodeStart: ['<bos>', '<obs>'], afterAction: ['<obs>'], actionEnd: '<eoa>', ids: { pad: PAD, bos: BOS, eoa: EOA, obs: OBS, unk: UNK } },
      tokenizer: {
        rule: `Left to right: at each position the longest whole-word token that the text continues with (ids ${SPECIAL_COUNT}..${first - 1}: ${WORD_TOKENS.join(' ')}), else the single character (ids ${first}..${VOCAB.length - 1}: newline, then ASCII 32..126 in order); any other character is <unk> (id ${UNK}). Decoding joins the token strings.`,
        wordTokens: WORD_TOKENS,
        characterIds: { first, characters: VOCAB.slice(first).join('') },
      },
      context: tmax,
      contextFull: 'When the context holds context tokens, the episode ends (truncated): no position is left to act from.',
      maxActionTokens: run.rollout.maxActionTokens,
      sampling: run.rollout.constrained
        ? "Trained sampling at temperature 1 under the env's action grammar (rollout.constrained): unmasked sampling may write calls the env rejects."
        : 'Trained sampling at temperature 1 from exp(logprobs); argmax is greedy play.',
    },
    actions: { kind: 'tokens', vocabulary: VOCAB },
  };
}
