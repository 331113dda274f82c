/**
 * # tools/kv-lookup
 *
 * ## Description
 * Multi-hop questions over a small knowledge base generated per seed: teams (by colour),
 * people, projects and cities. "Which city does the manager of team red live in?" needs two
 * lookups (the team gives its manager, the manager's entry gives the city); with `hops: 3` the
 * question starts from a project ("... of the team behind project orion ..."), one more hop.
 * Entries carry distractors (a team's home city, a person's birthplace) so answering with the
 * first city seen is usually wrong: the agent must follow the chain and read the right field.
 *
 * ## Observation
 * `{ text }`, at most 240 characters inside the shared vocabulary. At reset: the task, e.g.
 * `task: which city does the manager of team red live in? tools: lookup(key), answer(city).`
 * After each turn: an entry (`result: team red: manager ada, home city lima, 12 players`),
 * `error: no entry for "..."`, an `error:` line about a malformed call, or the verdict `done: ...`.
 *
 * ## Actions
 * One call per turn, at most 80 characters: `lookup(key)` where a key is written as the text
 * shows it (`team red`, `ada`, `project orion`; case and extra spaces are ignored);
 * `answer(city)` ends the episode. A lookup of a missing key is a valid call with an error
 * reply (`info.toolFailed`), not a malformed one.
 *
 * ## Reward
 * 1 for the right city, 0 otherwise (every other step is 0). `info.progress` is 1 each time a
 * key of the question's chain is looked up for the first time (one per hop; the subgoals the
 * `progress` shaping term rewards).
 *
 * ## Termination
 * Terminated by `answer(...)` (`info.success` = correct). Truncated after `maxTurns` turns.
 *
 * ## Kwargs
 * See `KvLookupConfig`.
 */
import type { Rng } from '../../util/rng.ts';
import type { EnvSpec } from '../types.ts';
import type { EnvKwargs } from '../registry.ts';
import {
  ToolEnvBase,
  LATENCY_RULES,
  intIn,
  isBool,
  normalizeArg,
  numIn,
  quote,
  readKwargs,
  toolActionSpace,
  toolObservationSpace,
} from './base.ts';
import type { Outcome, ToolCall, ToolDef, ToolLatencyConfig, ToolTurnsConfig } from './base.ts';

export const KV_LOOKUP_ID = 'tools/kv-lookup';

export interface KvLookupConfig extends ToolTurnsConfig, ToolLatencyConfig {
  /** Lookups the question needs: 2 (team -> manager -> city) or 3 (project -> team -> ...). */
  hops: number;
  /** Teams in the knowledge base (also the number of projects; people = 2 x teams). */
  teams: number;
  /** Add fields that are not on the chain (home city, birthplace, ...) to every entry. */
  distractors: boolean;
  /**
   * The expert only (the env's dynamics ignore it): the probability that it answers after its
   * first lookup with the first city that entry shows (the team's home city: a hasty, usually wrong
   * guess) instead of following the chain. Drawn per episode from the task seed. 0 = always follows it.
   */
  expertGuessProb: number;
}

export const KV_LOOKUP_DEFAULTS: KvLookupConfig = {
  maxTurns: 6,
  hops: 2,
  teams: 4,
  distractors: true,
  expertGuessProb: 0,
  latencyMedianMs: 10,
  latencySigma: 0.5,
};

const COLOURS = ['red', 'blue', 'green', 'gold', 'grey', 'pink', 'teal', 'navy', 'plum', 'jade'];
const PEOPLE = [
  'ada', 'bob', 'cleo', 'dev', 'eli', 'fay', 'gus', 'hana', 'ivan', 'jun', 'kai', 'lea',
  'milo', 'nia', 'omar', 'pia', 'raj', 'sol', 'tara', 'uma', 'vic', 'wen', 'yara', 'zed',
];
const PROJECTS = [
  'apollo', 'atlas', 'comet', 'delta', 'ember', 'falcon', 'gemini', 'harbor',
  'iris', 'juno', 'kepler', 'lotus', 'nova', 'orion', 'pulsar', 'vega',
];
const CITIES = [
  'oslo', 'lima', 'rome', 'kyiv', 'doha', 'baku', 'bern', 'cairo', 'delhi', 'dakar', 'hanoi',
  'lagos', 'minsk', 'osaka', 'paris', 'quito', 'riga', 'seoul', 'tokyo', 'vienna', 'zagreb', 'accra',
];

const TOOLS: readonly ToolDef[] = [
  { name: 'lookup', signature: 'lookup(key)' },
  { name: 'answer', signature: 'answer(city)' },
];

/** The generated world of one episode (exported for tests and for a UI that shows it). */
export interface KnowledgeBase {
  /** key -> entry text, e.g. `team red` -> `team red: manager ada, home city lima, 12 players`. */
  entries: Map<string, string>;
  /** The keys the question's chain visits, in order. */
  chain: string[];
  answer: string;
  question: string;
}

/** Draws a knowledge base and a question from `rng` (pure: same rng state, same world). */
export function generateKnowledgeBase(rng: Rng, cfg: Pick<KvLookupConfig, 'hops' | 'teams' | 'distractors'>): KnowledgeBase {
  const teams = rng.shuffle([...COLOURS]).slice(0, cfg.teams);
  const people = rng.shuffle([...PEOPLE]).slice(0, 2 * cfg.teams);
  const projects = rng.shuffle([...PROJECTS]).slice(0, cfg.teams);
  const otherCity = (not: string) => rng.choice(CITIES.filter((c) => c !== not));

  const lives = new Map<string, string>();
  const entries = new Map<string, string>();
  for (const p of people) {
    const home = rng.choice(CITIES);
    lives.set(p, home);
    const extra = `, born in ${otherCity(home)}, age ${rng.int(22, 66)}`;
    entries.set(p, `${p}: lives in ${home}${cfg.distractors ? extra : ''}`);
  }
  // The first `teams` people manage one team each; the rest are there to be looked up by mistake.
  const managerOf = new Map<string, string>();
  teams.forEach((t, i) => {
    const m = people[i];
    managerOf.set(t, m);
    const extra = `, home city ${otherCity(lives.get(m)!)}, ${rng.int(5, 30)} players`;
    entries.set(`team ${t}`, `team ${t}: manager ${m}${cfg.distractors ? extra : ''}`);
  });
  const runBy = new Map<string, string>();
  const order = rng.shuffle([...teams]);
  projects.forEach((p, i) => {
    runBy.set(p, order[i]);
    const extra = `, started ${rng.int(1990, 2026)}`;
    entries.set(`project ${p}`, `project ${p}: run by team ${order[i]}${cfg.distractors ? extra : ''}`);
  });

  const team = rng.choice(teams);
  const manager = managerOf.get(team)!;
  const answer = lives.get(manager)!;
  if (cfg.hops === 3) {
    const project = projects.find((p) => runBy.get(p) === team)!;
    return {
      entries,
      chain: [`project ${project}`, `team ${team}`, manager],
      answer,
      question: `which city does the manager of the team behind project ${project} live in?`,
    };
  }
  return { entries, chain: [`team ${team}`, manager], answer, question: `which city does the manager of team ${team} live in?` };
}

export class KvLookupEnv extends ToolEnvBase {
  readonly spec: EnvSpec;
  protected readonly tools = TOOLS;
  readonly config: KvLookupConfig;

  private kb: KnowledgeBase = { entries: new Map(), chain: [], answer: '', question: '' };
  /** Keys the agent has looked up successfully this episode (the expert skips those). */
  private found = new Set<string>();
  /** This episode's expert guesses after its first lookup (drawn at reset with expertGuessProb). */
  private hasty = false;
  /** The first city a successful lookup showed this episode ('' before one did). */
  private firstCitySeen = '';

  constructor(config: Partial<KvLookupConfig> = {}) {
    super();
    this.config = { ...KV_LOOKUP_DEFAULTS, ...config };
    const c = this.config;
    if (c.hops !== 2 && c.hops !== 3) throw new Error(`${KV_LOOKUP_ID}: hops must be 2 or 3, got ${c.hops}`);
    this.spec = {
      id: KV_LOOKUP_ID,
      title: `Knowledge-base lookup (${c.hops} hops)`,
      description:
        `Answer a ${c.hops}-hop question ("which city does the manager of team red live in?") ` +
        'over a small knowledge base drawn per seed, with lookup(key) calls. Entries hold ' +
        'distractor cities, so the agent must follow the chain and read the right field.',
      family: 'tool',
      observationSpace: toolObservationSpace(),
      actionSpace: toolActionSpace(),
      rewardRange: [0, 1],
      maxSteps: c.maxTurns,
    };
  }

  /** The current episode's world (read-only view, for tests and for showing the hidden state). */
  get knowledgeBase(): Readonly<KnowledgeBase> {
    return this.kb;
  }

  protected newEpisode(rng: Rng): string {
    this.kb = generateKnowledgeBase(rng, this.config);
    this.found = new Set();
    this.firstCitySeen = '';
    // Forked after the world is drawn: the expert's coin never changes the task.
    this.hasty = rng.fork().bernoulli(this.config.expertGuessProb);
    const tools = TOOLS.map((t) => t.signature).join(', ');
    return `task: ${this.kb.question} tools: ${tools}.`;
  }

  protected handle(call: ToolCall): Outcome {
    const arg = normalizeArg(call.args);
    if (call.tool === 'answer') {
      if (arg === '') return { kind: 'malformed', error: 'answer needs a city: answer(city)' };
      const success = arg === this.kb.answer;
      return {
        kind: 'final',
        success,
        reward: success ? 1 : 0,
        text: success ? `done: correct, ${this.kb.answer}.` : `done: wrong, the answer is ${this.kb.answer}.`,
      };
    }
    // lookup
    if (arg === '') return { kind: 'malformed', error: 'lookup needs a key, e.g. lookup(team red)' };
    const latencyMs = this.drawLatency(this.config.latencyMedianMs, this.config.latencySigma);
    const entry = this.kb.entries.get(arg);
    if (entry === undefined) return { kind: 'tool', failed: true, latencyMs, text: `error: no entry for ${quote(arg)}` };
    // Progress: one per hop of the question's chain, the first time it is looked up.
    const progress = this.kb.chain.includes(arg) && !this.found.has(arg) ? 1 : 0;
    this.found.add(arg);
    if (this.firstCitySeen === '') this.firstCitySeen = entry.split(/[\s,:]+/).find((w) => CITIES.includes(w)) ?? '';
    return { kind: 'tool', failed: false, latencyMs, progress, text: `result: ${entry}` };
  }

  protected expert(): string {
    if (this.hasty && this.found.size > 0) return `answer(${this.firstCitySeen || CITIES[0]})`;
    const next = this.kb.chain.find((k) => !this.found.has(k));
    return next === undefined ? `answer(${this.kb.answer})` : `lookup(${next})`;
  }

  protected timeoutNote(): string {
    return `the answer was ${this.kb.answer} (${this.kb.chain.join(' -> ')}).`;
  }
}

export function makeKvLookup(kwargs: EnvKwargs = {}): KvLookupEnv {
  return new KvLookupEnv(
    readKwargs(KV_LOOKUP_ID, kwargs, KV_LOOKUP_DEFAULTS, {
      maxTurns: intIn(1, 100),
      hops: intIn(2, 3),
      teams: intIn(2, Math.min(COLOURS.length, PROJECTS.length, PEOPLE.length / 2)),
      distractors: isBool,
      expertGuessProb: numIn(0, 1),
      ...LATENCY_RULES,
    }),
  );
}
