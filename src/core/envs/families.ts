/**
 * The env family registry: every family of env the playground trains, one descriptor each. An
 * env's spec names its family (`EnvSpec.family`); the config schema, the trainers, the rollout
 * pools, the server, the CLI and the UI read the family's descriptor (what it observes and does,
 * which policies fit it, how its episodes become training data, how the server and the pages show
 * it) instead of comparing family names. Code envs and custom maps are not families of their own:
 * a code env reports 'grid' (discrete actions) or 'tool' (text actions) from what it declares, and
 * a custom map is a grid env.
 *
 * To add a family: write its descriptor here and add it to ENV_FAMILIES; its envs set
 * `spec.family` to its name and register from its folder (one import in envs/index.ts). A family
 * whose envs need something started in each thread before they play (remote envs' network thread)
 * also adds its link to src/runtime/envLinks.ts; everything else reads this descriptor. This file
 * imports nothing, so every room may read it.
 */

/** A policy architecture a run config names (`model.kind`). */
export type ModelKind = 'mlp' | 'transformer';

/** Every model kind, in the order messages list them. */
export const MODEL_KINDS: readonly ModelKind[] = ['mlp', 'transformer'];

/** The env family + policy pair the algorithm descriptors' refusals name (algos/registry/types.ts AlgoTarget). */
export type PlayTarget = 'grid-mlp' | 'grid-text' | 'tool';

/** How one kind of policy plays a family's envs, and what its episodes become for training. */
export interface FamilyPlay {
  /**
   * Training data an episode becomes: 'steps', one row per step (observation, action), played in
   * the MLP's step pools and trained by the step trainer; 'tokens', one token sequence per episode
   * (the text the env shows and the policy writes), trained by the token trainers.
   */
  data: 'steps' | 'tokens';
  /** The pair's name in the algorithm descriptors' `refuses` (which algorithms run on it). */
  target: PlayTarget;
  /** Rollout workers: at most `max` (Infinity: a pool of any size); `why` is the refusal's text above it. */
  workers: { max: number; why: string };
  /** Why rollout.mode 'async' is refused (the play trains synchronously only); null when async runs. */
  syncOnly: string | null;
  /** A token rollout worker (rollout.workers 1) serves group algorithms only. */
  workerNeedsGroupAlgo: boolean;
  /** Async training takes a group algorithm only. */
  asyncNeedsGroupAlgo: boolean;
  /**
   * Group algorithms (other than greedy-baseline ones) sample on continuous batching: episodes
   * join a shared KV-cache decoder as slots free up, rather than in lockstep groups.
   */
  continuous: boolean;
  /** A prompt pool (rollout.budget.pool > 0, with adaptive allocation) can spread episodes over prompts. */
  promptPool: boolean;
}

/** What a family is: its observations and actions, the policies that fit it, and how it is shown. */
export interface EnvFamily {
  /** `EnvSpec.family` of its envs. */
  name: 'grid' | 'tool' | 'remote';
  /** The env list's heading over its envs, and the line under it. */
  title: string;
  blurb: string;
  /** How its built-in envs' ids begin (the env list groups an env whose spec failed to build by it). */
  idPrefix: string;
  /**
   * What an observation is: 'grid', an egocentric view (view×view×3 bytes under `image`, with its
   * text) or, for a vector code env, floats under `vector` (the observation space says which);
   * 'text', the text the env shows this turn.
   */
  observation: 'grid' | 'text';
  /** What an action is: 'discrete', an index into the action space's names; 'text', a call the policy writes. */
  action: 'discrete' | 'text';
  /** Its envs step in the MLP's step pools (StepObs in, an action index out). */
  stepPool: boolean;
  /**
   * How a token policy reads it: 'native', the env is text already (a ToolEnv); 'grid-adapter',
   * through GridTextEnv (envs/grid/textAdapter.ts: the view as text, one letter per action).
   */
  textForm: 'native' | 'grid-adapter';
  /** The policies that fit it, each with how it plays; a kind absent here is refused (`modelKindRule`). */
  plays: Readonly<Partial<Record<ModelKind, FamilyPlay>>>;
  /** What fits, as the refusal of a model kind absent from `plays` says it. */
  modelKindRule: string;
  /** The model kind the Train form lists its envs under (the env picker follows `model.kind`). */
  listedUnder: ModelKind;
  /** One unit of time in an episode, as people read it (the time limit counts these). */
  stepNoun: 'step' | 'turn';
  /** The kind of observations in a sentence ("grid observations", "a text code env"). */
  label: 'grid' | 'text';
  /** How the env viewer draws an episode: the grid itself, or the transcript of turns. */
  view: 'grid' | 'transcript';
  /** The env server's form of it: the observation schema's title, and whether it serves verl-tool's batched /get_observation. */
  wire: { observationTitle: string; verlTool: boolean };
  /**
   * Its envs step over a network (a server's env): the Speed charts show each step's round trip
   * (perf/env_wire_ms), and since the server can go away in any iteration, a headless run keeps
   * its last finished iteration's checkpoint.
   */
  overNetwork: boolean;
  /** Its episodes call named tools, counted by the tool charts (tools/call_frequency, tools/failure_frequency, tools/<name>/…). */
  toolCharts: boolean;
}

const GRID: EnvFamily = {
  name: 'grid',
  title: 'Grid worlds',
  blurb: 'Navigate with a partial, egocentric view.',
  idPrefix: 'grid/',
  observation: 'grid',
  action: 'discrete',
  stepPool: true,
  textForm: 'grid-adapter',
  plays: {
    mlp: { data: 'steps', target: 'grid-mlp', workers: { max: Infinity, why: '' }, syncOnly: null, workerNeedsGroupAlgo: false, asyncNeedsGroupAlgo: false, continuous: false, promptPool: false },
    // Played as text by the synchronous token trainer, decoding in the training thread.
    transformer: {
      data: 'tokens',
      target: 'grid-text',
      workers: { max: 0, why: 'grid envs played as text decode in the training thread; use 0' },
      syncOnly: 'grid envs played as text (transformer) train synchronously',
      workerNeedsGroupAlgo: false,
      asyncNeedsGroupAlgo: false,
      continuous: false,
      promptPool: false,
    },
  },
  modelKindRule: 'grid envs take an mlp or a transformer',
  listedUnder: 'mlp',
  stepNoun: 'step',
  label: 'grid',
  view: 'grid',
  wire: { observationTitle: 'GridObservation', verlTool: false },
  overNetwork: false,
  toolCharts: false,
};

const TOOL: EnvFamily = {
  name: 'tool',
  title: 'Tool APIs',
  blurb: 'Multi-turn: call tools, then answer.',
  idPrefix: 'tools/',
  observation: 'text',
  action: 'text',
  stepPool: false,
  textForm: 'native',
  plays: {
    transformer: {
      data: 'tokens',
      target: 'tool',
      workers: { max: 1, why: 'tool envs decode in the training thread (0) or in one rollout worker (1) over one KV cache; use 0 or 1' },
      syncOnly: null,
      workerNeedsGroupAlgo: true,
      asyncNeedsGroupAlgo: true,
      continuous: true,
      promptPool: true,
    },
  },
  modelKindRule: "tool envs train a 'transformer' over tokens",
  listedUnder: 'transformer',
  stepNoun: 'turn',
  label: 'text',
  view: 'transcript',
  wire: { observationTitle: 'ToolObservation', verlTool: true },
  overNetwork: false,
  toolCharts: true,
};

/**
 * Envs on an OpenEnv server, played over the network (envs/remote): text in, text out, like a tool
 * env, and trained the same way. Each env instance holds its own server session; a step blocks its
 * thread on the reply, so rollout workers play as they do tool envs.
 */
const REMOTE: EnvFamily = {
  ...TOOL,
  name: 'remote',
  title: 'Remote envs',
  blurb: 'An env on an OpenEnv server, over the wire.',
  idPrefix: 'remote/',
  plays: {
    transformer: {
      ...TOOL.plays.transformer!,
      workers: { max: 1, why: 'remote envs decode in the training thread (0) or in one rollout worker (1), each env holding its own server session; use 0 or 1' },
    },
  },
  modelKindRule: "remote envs train a 'transformer' over tokens",
  // Served again by this server, a remote env would be a proxy; the server serves built-in envs only.
  wire: { observationTitle: 'ToolObservation', verlTool: false },
  overNetwork: true,
  // Its MCP tools are not counted by the tool charts (the calls are the server's).
  toolCharts: false,
};

/** Every family, in the order messages and the env list show them. */
export const ENV_FAMILIES: readonly EnvFamily[] = [GRID, TOOL, REMOTE];

/** A family's name (`EnvSpec.family`). */
export type EnvFamilyName = EnvFamily['name'];

const BY_NAME: ReadonlyMap<string, EnvFamily> = new Map(ENV_FAMILIES.map((f) => [f.name, f]));

/** The descriptor of the family `name`; throws on a name that is not registered. */
export function envFamily(name: string): EnvFamily {
  const f = BY_NAME.get(name);
  if (!f) throw new RangeError(`unknown env family '${name}' (registered: ${ENV_FAMILIES.map((d) => d.name).join(', ')})`);
  return f;
}

/** The family descriptor of an env, from its spec. */
export function familyOf(spec: { family: string }): EnvFamily {
  return envFamily(spec.family);
}

/**
 * The family an env id belongs to by its id's prefix (`idPrefix`), before any env is built: null
 * for ids outside every family's prefix (code envs, whose family their code declares).
 */
export function familyOfEnvId(envId: string): EnvFamily | null {
  return ENV_FAMILIES.find((f) => envId.startsWith(f.idPrefix)) ?? null;
}

/** The model kinds that fit a family (the keys of its `plays`), in MODEL_KINDS order. */
export function modelKindsOf(f: EnvFamily): ModelKind[] {
  return MODEL_KINDS.filter((k) => f.plays[k] !== undefined);
}

/**
 * How `kind` plays the family; for a kind that does not fit, the play of the kind its envs are
 * listed under, so a config that names the wrong policy is still judged by the family's other
 * rules (its model.kind refusal comes from `modelKindRule`).
 */
export function playOf(f: EnvFamily, kind: string): FamilyPlay {
  return f.plays[kind as ModelKind] ?? f.plays[f.listedUnder]!;
}
