/**
 * # tools/memory
 *
 * ## Description
 * A long task with notes to keep: items are shown one per turn, first `facts` facts
 * (`fact: door = 47`), then `rumors` decoys in the same shape (`rumor: door = 31`, often about a
 * fact's own key, with a wrong value), then a question about one fact (`question: what is door?`).
 * Each item is shown once and replaced by the next, so an agent that sees only the latest
 * observation must `store(key, value)` a fact while it is on screen and `recall(key)` it when
 * the question comes; without notes it can only guess (chance: 1 / 90, values are 10..99).
 * Notes cost `toolCost` each, so storing rumors or recalling twice lowers the return.
 *
 * The token policies here keep the whole transcript in their context, which is itself a memory:
 * for them `recall` turns a long-range lookup (the fact is ~100 tokens back among look-alike
 * rumors) into a copy from the last observation. `memoryTools: false` is the baseline: no
 * store/recall, the agent must answer from what it read (README.md in this folder compares the two).
 *
 * ## Observation
 * `{ text }`, at most 240 characters inside the shared vocabulary. At reset: the task and the
 * first fact, e.g. `task: facts first, a question last. tools: store(key, value),
 * recall(key), next(), answer(value). notes cost 0.02. fact: door = 47`. After `store` and
 * `next()`: the next item (`stored door. rumor: gate = 12`); after `recall`:
 * `result: door = 47` or `error: no note for "door"`; an `error:` line about a malformed call;
 * or the verdict `done: ...`.
 *
 * ## Actions
 * One call per turn, at most 80 characters: `store(key, value)` keeps a note (a later store to
 * the same key replaces it) and shows the next item; `next()` shows the next item;
 * `recall(key)` shows the note, `answer(value)` ends the episode. Keys and values are
 * compared trimmed and lowercase. Without `memoryTools` only `next()` and `answer(value)` exist.
 *
 * Action grammar (`actionGrammar()`, for constrained decoding): `store(` a key `, ` a value `)`,
 * `recall(` a key `)`, `next()`, `answer(` a value `)`, where keys and values are enums of what
 * the transcript has shown so far (the keys and values of facts, rumors, recalled notes, and the
 * question's key). Without `memoryTools`: `next()` and `answer(` a value `)`.
 *
 * ## Reward
 * `-toolCost` on every store and recall (failed or not); 1 for the right answer, 0 otherwise.
 * `info.progress` is 1 the first time each fact is stored with its value, and 1 the first time
 * the asked fact is recalled after the question (the subgoals the `progress` shaping term
 * rewards). The expert's return is 1 - toolCost * (facts + 1).
 *
 * ## Termination
 * Terminated by `answer(...)` (`info.success` = correct). Truncated after `maxTurns` turns.
 *
 * ## Kwargs
 * See `MemoryConfig`.
 */
import type { Rng } from '../../util/rng.ts';
import type { EnvSpec } from '../types.ts';
import type { EnvKwargs } from '../registry.ts';
import { call, lit, oneOf, type ActionGrammar } from '../../text/grammar.ts';
import {
  ToolEnvBase,
  intIn,
  isBool,
  normalizeArg,
  numIn,
  quote,
  readKwargs,
  toolActionSpace,
  toolGrammar,
  toolObservationSpace,
} from './base.ts';
import type { Outcome, ToolCall, ToolDef, ToolTurnsConfig } from './base.ts';

export const MEMORY_ID = 'tools/memory';

export interface MemoryConfig extends ToolTurnsConfig {
  /** Facts shown before the question (one of them is asked). */
  facts: number;
  /** Decoy items between the facts and the question (`rumor: key = value`, wrong values). */
  rumors: number;
  /** Offer store(key, value) and recall(key); false is the no-notes baseline. */
  memoryTools: boolean;
  /** Reward subtracted for every store and recall call. */
  toolCost: number;
  /** Median simulated duration of a store or recall call, ms. */
  latencyMedianMs: number;
  /** Log-space standard deviation of that duration. */
  latencySigma: number;
}

export const MEMORY_DEFAULTS: MemoryConfig = {
  maxTurns: 10,
  facts: 2,
  rumors: 2,
  memoryTools: true,
  toolCost: 0.02,
  latencyMedianMs: 5,
  latencySigma: 0.5,
};

/** Keys of facts and rumors (short, so a transcript fits a small context). */
const KEYS = ['door', 'gate', 'safe', 'lamp', 'desk', 'boat', 'bike', 'bell', 'drum', 'kite', 'ring', 'vase'];
/** Values are two-digit numbers: a guess is right with probability 1 / (VALUE_HI - VALUE_LO). */
const VALUE_LO = 10;
const VALUE_HI = 100;
/** Longest key or value a note takes (characters). */
const NOTE_MAX = 12;

const MEMORY_TOOLS: readonly ToolDef[] = [
  { name: 'store', signature: 'store(key, value)' },
  { name: 'recall', signature: 'recall(key)' },
  { name: 'next', signature: 'next()' },
  { name: 'answer', signature: 'answer(value)' },
];
const PLAIN_TOOLS: readonly ToolDef[] = MEMORY_TOOLS.filter((t) => t.name === 'next' || t.name === 'answer');

interface Item {
  kind: 'fact' | 'rumor' | 'question';
  key: string;
  /** The fact's or rumor's value; for the question, the right answer. */
  value: number;
}

export class MemoryEnv extends ToolEnvBase {
  readonly spec: EnvSpec;
  protected readonly tools: readonly ToolDef[];
  readonly config: MemoryConfig;

  /** The episode's items in the order they are shown; the last is the question. */
  private items: Item[] = [];
  /** Index of the item on screen (the last one shown). */
  private cursor = 0;
  private notes = new Map<string, string>();
  /** Facts stored with their right value at least once (progress is paid once per fact). */
  private storedFacts = new Set<string>();
  /** The asked fact was recalled after the question (the expert then answers). */
  private recalled = false;

  constructor(config: Partial<MemoryConfig> = {}) {
    super();
    this.config = { ...MEMORY_DEFAULTS, ...config };
    const c = this.config;
    if (c.facts < 1 || c.facts > KEYS.length) throw new Error(`${MEMORY_ID}: facts must be in 1..${KEYS.length}, got ${c.facts}`);
    // The expert needs facts + rumors + 2 turns (a store or next() per item, a recall, the answer).
    if (c.maxTurns < c.facts + c.rumors + 2) throw new Error(`${MEMORY_ID}: maxTurns ${c.maxTurns} is too few for ${c.facts} facts and ${c.rumors} rumors; at least ${c.facts + c.rumors + 2}`);
    this.tools = c.memoryTools ? MEMORY_TOOLS : PLAIN_TOOLS;
    this.spec = {
      id: MEMORY_ID,
      title: c.memoryTools ? 'Memory: store and recall' : 'Memory: no notes (baseline)',
      description:
        `${c.facts} facts are shown one per turn, then ${c.rumors} look-alike rumors, then a question about one fact. ` +
        (c.memoryTools
          ? `The agent keeps notes with store(key, value) and reads them back with recall(key) (${c.toolCost} per call); ` +
            'each item is shown once, so an agent without notes can only guess.'
          : 'No notes: the agent must answer from the transcript it read (the baseline for store/recall).'),
      family: 'tool',
      observationSpace: toolObservationSpace(),
      actionSpace: toolActionSpace(),
      // Per step: a note costs toolCost; the answer step pays 1 or 0.
      rewardRange: [c.memoryTools ? -c.toolCost : 0, 1],
      maxSteps: c.maxTurns,
    };
  }

  /** The episode's items (read-only, for tests and for showing the hidden state). */
  get schedule(): readonly Readonly<Item>[] {
    return this.items;
  }

  private get question(): Item {
    return this.items[this.items.length - 1];
  }

  protected newEpisode(rng: Rng): string {
    const keys = rng.shuffle([...KEYS]);
    const facts: Item[] = keys.slice(0, this.config.facts).map((key) => ({ kind: 'fact', key, value: rng.int(VALUE_LO, VALUE_HI) }));
    const rumors: Item[] = [];
    for (let i = 0; i < this.config.rumors; i++) {
      // Half the rumors are about a fact's own key (with another value): copying the last
      // "<key> = " seen in the transcript is then wrong, the agent must read the label.
      const onFact = rng.bernoulli(0.5);
      const fact = rng.choice(facts);
      const key = onFact ? fact.key : keys[this.config.facts + (i % (keys.length - this.config.facts))];
      let value = rng.int(VALUE_LO, VALUE_HI - 1);
      if (onFact && value >= fact.value) value++; // any value but the fact's
      rumors.push({ kind: 'rumor', key, value });
    }
    const asked = rng.choice(facts);
    this.items = [...facts, ...rumors, { kind: 'question', key: asked.key, value: asked.value }];
    this.cursor = 0;
    this.notes = new Map();
    this.storedFacts = new Set();
    this.recalled = false;
    const tools = this.tools.map((t) => t.signature).join(', ');
    const cost = this.config.memoryTools ? ` notes cost ${this.config.toolCost}.` : '';
    return `task: facts first, a question last. tools: ${tools}.${cost} ${this.show()}`;
  }

  /** The text of the item on screen. */
  private show(): string {
    const it = this.items[this.cursor];
    return it.kind === 'question' ? `question: what is ${it.key}?` : `${it.kind}: ${it.key} = ${it.value}`;
  }

  /** Moves to the next item and returns its text; at the question it stays there. */
  private advance(): string {
    if (this.cursor < this.items.length - 1) this.cursor++;
    return this.show();
  }

  protected handle(call: ToolCall): Outcome {
    const arg = normalizeArg(call.args);
    switch (call.tool) {
      case 'answer': {
        if (arg === '') return { kind: 'malformed', error: 'answer needs a value: answer(value)' };
        if (this.items[this.cursor].kind !== 'question') {
          // Answering before the question is asked is a wrong answer, not a malformed call.
          return { kind: 'final', success: false, reward: 0, text: `done: wrong, the question was not asked yet; it was about ${this.question.key}.` };
        }
        const success = arg === String(this.question.value);
        return {
          kind: 'final',
          success,
          reward: success ? 1 : 0,
          text: success ? `done: correct, ${this.question.value}.` : `done: wrong, ${this.question.key} was ${this.question.value}.`,
        };
      }
      case 'next': {
        if (call.args.trim() !== '') return { kind: 'malformed', error: 'next takes no argument: write next()' };
        // No tool is reached: no cost, no time.
        if (this.items[this.cursor].kind === 'question') return { kind: 'tool', failed: true, latencyMs: 0, text: `error: no more items; ${this.show()}` };
        return { kind: 'tool', failed: false, latencyMs: 0, text: this.advance() };
      }
      case 'store': {
        const comma = arg.indexOf(',');
        if (comma < 0) return { kind: 'malformed', error: 'store takes a key and a value: store(key, value)' };
        const key = arg.slice(0, comma).trim();
        const value = arg.slice(comma + 1).trim();
        if (key === '' || value === '') return { kind: 'malformed', error: 'store needs both a key and a value: store(key, value)' };
        if (key.length > NOTE_MAX || value.length > NOTE_MAX) return { kind: 'malformed', error: `keys and values are at most ${NOTE_MAX} characters` };
        const latencyMs = this.drawLatency(this.config.latencyMedianMs, this.config.latencySigma);
        this.notes.set(key, value);
        const fact = this.items.find((it) => it.kind === 'fact' && it.key === key);
        const progress = fact && value === String(fact.value) && !this.storedFacts.has(key) ? 1 : 0;
        if (progress) this.storedFacts.add(key);
        return { kind: 'tool', failed: false, latencyMs, reward: -this.config.toolCost, progress, text: `stored ${key}. ${this.advance()}` };
      }
      default: {
        // recall
        if (arg === '') return { kind: 'malformed', error: 'recall needs a key, e.g. recall(door)' };
        const latencyMs = this.drawLatency(this.config.latencyMedianMs, this.config.latencySigma);
        const reward = -this.config.toolCost;
        const note = this.notes.get(arg);
        if (note === undefined) return { kind: 'tool', failed: true, latencyMs, reward, text: `error: no note for ${quote(arg, 20)}` };
        const asked = this.items[this.cursor].kind === 'question' && arg === this.question.key;
        const progress = asked && note === String(this.question.value) && !this.recalled ? 1 : 0;
        if (asked) this.recalled = true;
        return { kind: 'tool', failed: false, latencyMs, reward, progress, text: `result: ${arg} = ${note}` };
      }
    }
  }

  /** The actions constrained decoding may sample now (see the header's Actions). */
  actionGrammar(): ActionGrammar {
    const keys: string[] = [];
    const values: string[] = [];
    for (const text of this.shownTexts()) {
      for (const m of text.matchAll(/([a-z]+) = (\d+)/g)) {
        keys.push(m[1]);
        values.push(m[2]);
      }
      for (const m of text.matchAll(/what is ([a-z]+)\?/g)) keys.push(m[1]);
    }
    const key = oneOf(keys);
    const value = oneOf(values);
    const plain = [call('next'), call('answer', value)];
    return toolGrammar(this.config.memoryTools ? [call('store', key, lit(', '), value), call('recall', key), ...plain] : plain);
  }

  protected expert(): string {
    const it = this.items[this.cursor];
    if (it.kind === 'question') {
      if (!this.config.memoryTools || this.recalled) return `answer(${it.value})`;
      return `recall(${it.key})`;
    }
    const wanted = it.kind === 'fact' && this.config.memoryTools && this.notes.get(it.key) !== String(it.value);
    return wanted ? `store(${it.key}, ${it.value})` : 'next()';
  }

  protected timeoutNote(): string {
    return `the answer was ${this.question.value} (${this.question.key}).`;
  }
}

export function makeMemory(kwargs: EnvKwargs = {}): MemoryEnv {
  return new MemoryEnv(
    readKwargs(MEMORY_ID, kwargs, MEMORY_DEFAULTS, {
      maxTurns: intIn(1, 100),
      facts: intIn(1, 6),
      rumors: intIn(0, 8),
      memoryTools: isBool,
      toolCost: numIn(0, 1),
      latencyMedianMs: numIn(0, 60_000),
      latencySigma: numIn(0, 5),
    }),
  );
}
