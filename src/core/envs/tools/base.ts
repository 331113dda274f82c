/**
 * Shared machinery for the mock tool-API envs: strict parsing of one tool call per
 * turn, turn counting and the time limit, the transcript a person reads, malformed-call
 * bookkeeping, simulated latency, and the seeded random streams.
 *
 * An env built on `ToolEnvBase` only describes its task: a question (`newEpisode`), what each
 * tool does (`handle`), the expert's next call (`expert`) and what to reveal when time runs out.
 *
 * Info on every step: `turn` (1-based), `malformed`, `malformedCount` (so far this episode),
 * `latencyMs` (simulated duration: a tool call's drawn latency; 0 for malformed actions and
 * answers, which reach no tool). On a valid tool call also `toolCall` (the tool's name; not set
 * for `answer`) and `toolFailed` (the tool replied `error: ...` instead of a result: a service
 * failure, a missing key, a division by zero). Every `error:` reply is thus either malformed or
 * a failed tool call. `recovered` (set only when true): this call succeeded and the tool call
 * before it failed (malformed turns in between do not count as calls): the agent got past an
 * error observation, what `tools/recovery_rate` measures. On the last step `success`.
 *
 * Agent input never throws. Whatever the policy (or a student typing in the UI) sends, the env
 * answers with an observation: a malformed action gets `error: <what is wrong>`, consumes the
 * turn and is counted in `info.malformedCount`. Only programming errors throw (stepping before
 * `reset` or after the episode ended).
 */
import { documentKwarg } from '../kwargDocs.ts';
import { Rng } from '../../util/rng.ts';
import { CHARSET, sanitize } from '../../text/codec.ts';
import { dict, text } from '../spaces.ts';
import type { DictSpace, TextSpace } from '../spaces.ts';
import { grammar, type ActionGrammar, type Pattern } from '../../text/grammar.ts';
import type { EnvKwargs } from '../registry.ts';
import type {
  EnvSpec,
  Info,
  ResetOptions,
  ResetResult,
  StepResult,
  ToolEnv,
  ToolObs,
  TranscriptFrame,
  TranscriptMessage,
} from '../types.ts';

/** Longest action string (characters) a tool env accepts; longer ones are malformed. */
export const ACTION_MAX_LENGTH = 80;
/** Longest observation text (characters) a tool env emits; every message is clipped to it. */
export const OBS_MAX_LENGTH = 240;

export const toolActionSpace = (): TextSpace => text(ACTION_MAX_LENGTH, CHARSET);
export const toolObservationSpace = (): DictSpace => dict({ text: text(OBS_MAX_LENGTH, CHARSET) });

/** A tool the agent may call. `name(` must be one of the codec's word tokens. */
export interface ToolDef {
  name: string;
  /** How the task text and error hints show it, e.g. `calc(expression)`. */
  signature: string;
}

/** One parsed call: `name(args)` with args exactly as written between the outer parentheses. */
export interface ToolCall {
  tool: string;
  args: string;
}

export type ParseResult = { ok: true; call: ToolCall } | { ok: false; error: string };

/** An action grammar of a tool env: one of `calls`, at most ACTION_MAX_LENGTH characters. */
export const toolGrammar = (calls: readonly Pattern[]): ActionGrammar => grammar(calls, ACTION_MAX_LENGTH);

/** Text shown inside messages: inside the vocabulary, one line, at most `max` characters, quoted. */
export function quote(s: string, max = 32): string {
  let t = sanitize(s).replace(/\n/g, ' ');
  if (t.length > max) t = `${t.slice(0, max - 3)}...`;
  return `"${t.replace(/"/g, "'")}"`;
}

/**
 * Strict parse of an action: after trimming surrounding whitespace it must be exactly one call
 * `name(args)` to one of `tools`, with the parentheses balanced and nothing after the call.
 * The error says what is wrong in words a student can act on.
 */
export function parseCall(action: unknown, tools: readonly ToolDef[], maxLength = ACTION_MAX_LENGTH): ParseResult {
  const fail = (error: string): ParseResult => ({ ok: false, error });
  const listing = tools.map((t) => t.signature).join(', ');
  if (typeof action !== 'string') return fail(`the action must be text, not ${action === null ? 'null' : typeof action}`);
  if (action.length > maxLength) return fail(`the action is ${action.length} characters long; the limit is ${maxLength}`);
  for (let i = 0; i < action.length; i++) {
    if (!CHARSET.includes(action[i])) return fail(`character ${i + 1} of the action is outside the vocabulary (printable ASCII only)`);
  }
  const s = action.trim();
  if (s === '') return fail(`empty action; write one tool call: ${listing}`);
  const open = s.indexOf('(');
  if (open < 0) return fail(`${quote(s)} is not a tool call; write one of ${listing}`);
  const head = s.slice(0, open);
  if (!tools.some((t) => t.name === head)) {
    const near = head.trim().toLowerCase();
    if (tools.some((t) => t.name === near)) {
      return fail(head.trim() !== head ? `no space allowed between ${near} and "("` : `tool names are lowercase: write ${near}(`);
    }
    return fail(`unknown tool ${quote(head, 20)}; the tools here are ${listing}`);
  }
  let depth = 0;
  let close = -1;
  for (let i = open; i < s.length && close < 0; i++) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')' && --depth === 0) close = i;
  }
  if (close < 0) return fail(`missing ")" to close ${head}(`);
  if (close !== s.length - 1) return fail(`unexpected text after the call: ${quote(s.slice(close + 1), 20)}; write one call per turn`);
  return { ok: true, call: { tool: head, args: s.slice(open + 1, close) } };
}

/** Lookup keys and free-text answers: trimmed, inner whitespace collapsed, lowercase. */
export const normalizeArg = (args: string): string => args.trim().replace(/\s+/g, ' ').toLowerCase();

/** A whole number as written in an answer: optional sign, 1 to 15 digits; null otherwise. */
export function parseWholeNumber(args: string): number | null {
  const s = args.trim();
  if (!/^[+-]?\d{1,15}$/.test(s)) return null;
  const n = Number(s);
  return n === 0 ? 0 : n; // no -0
}

/** What one valid call did. */
export type Outcome =
  /**
   * A tool answered; the episode goes on. `failed`: the tool returned an error, not a result.
   * `progress`: subgoals this call reached for the first time (reported as `info.progress`,
   * what the `progress` shaping term rewards), e.g. 1 when the reply first shows the answer.
   */
  | { kind: 'tool'; text: string; failed: boolean; latencyMs: number; reward?: number; progress?: number }
  /** The arguments do not parse for this tool (counted as malformed, like a bad call). */
  | { kind: 'malformed'; error: string }
  /** `answer(...)`: the episode ends. */
  | { kind: 'final'; text: string; success: boolean; reward: number };

export abstract class ToolEnvBase implements ToolEnv {
  abstract readonly spec: EnvSpec;
  /** The tools, `answer` included, in the order the task text lists them. */
  protected abstract readonly tools: readonly ToolDef[];

  /** Stream for tool-side chance (failures), forked at reset so it is independent of the task. */
  protected events = new Rng(0);
  private latencyRng = new Rng(0);
  /** Source of seeds for `reset()` without a seed (continues from the last seeded reset). */
  private seedStream = new Rng(0);
  private messages: TranscriptMessage[] = [];
  private turn = 0;
  private malformedCount = 0;
  /** Did the last valid tool call (not `answer`, not a malformed turn) fail? */
  private lastCallFailed = false;
  private started = false;
  private done = false;

  /** Draws a new task from `rng` and returns the task text the agent sees first. */
  protected abstract newEpisode(rng: Rng): string;
  /** Runs one syntactically valid call. Must not throw on any agent input. */
  protected abstract handle(call: ToolCall): Outcome;
  /** The expert's next action; called only while the episode runs. */
  protected abstract expert(): string;
  /** Shown in the transcript when the turn limit ends the episode, e.g. the right answer. */
  protected abstract timeoutNote(): string;

  reset(opts: ResetOptions = {}): ResetResult<ToolObs> {
    if (opts.seed !== undefined) this.seedStream = new Rng(opts.seed);
    // Separate streams: the task, tool latencies and tool failures. A policy's choices change
    // how many calls it makes, never which task it got; and the k-th call of every rollout in
    // a GRPO group meets the same latency and the same failure draw (common random numbers).
    const root = this.seedStream.fork();
    const taskRng = root.fork();
    this.latencyRng = root.fork();
    this.events = root.fork();
    this.turn = 0;
    this.malformedCount = 0;
    this.lastCallFailed = false;
    this.started = true;
    this.done = false;
    const task = this.clip(this.newEpisode(taskRng));
    this.messages = [{ role: 'task', text: task }];
    return { obs: { text: task }, info: { turn: 0, malformedCount: 0 } };
  }

  step(action: string): StepResult<ToolObs> {
    if (!this.started) throw new Error(`${this.spec.id}: step() before reset()`);
    if (this.done) throw new Error(`${this.spec.id}: step() after the episode ended at turn ${this.turn}; call reset() first`);
    this.turn++;
    const shown = typeof action === 'string' ? sanitize(action) : quote(String(action));
    this.messages.push({ role: 'agent', text: shown.length > 2 * ACTION_MAX_LENGTH ? `${shown.slice(0, 2 * ACTION_MAX_LENGTH)}...` : shown });

    const parsed = parseCall(action, this.tools);
    const outcome: Outcome = parsed.ok ? this.handle(parsed.call) : { kind: 'malformed', error: parsed.error };
    const info: Info = { turn: this.turn, malformed: outcome.kind === 'malformed', latencyMs: 0 };
    let reward = 0;
    let terminated = false;
    let obsText: string;
    switch (outcome.kind) {
      case 'malformed':
        this.malformedCount++;
        obsText = this.clip(`error: ${outcome.error}`);
        this.messages.push({ role: 'error', text: obsText });
        break;
      case 'tool':
        if (parsed.ok) info.toolCall = parsed.call.tool;
        info.toolFailed = outcome.failed;
        if (this.lastCallFailed && !outcome.failed) info.recovered = true;
        this.lastCallFailed = outcome.failed;
        info.latencyMs = outcome.latencyMs;
        reward = outcome.reward ?? 0;
        if (outcome.progress) info.progress = outcome.progress;
        obsText = this.clip(outcome.text);
        this.messages.push({ role: outcome.failed ? 'error' : 'tool', text: obsText });
        break;
      case 'final':
        terminated = true;
        reward = outcome.reward;
        info.success = outcome.success;
        obsText = this.clip(outcome.text);
        this.messages.push({ role: 'result', text: obsText });
        break;
    }
    info.malformedCount = this.malformedCount;
    const truncated = !terminated && this.turn >= this.spec.maxSteps;
    if (truncated) {
      info.success = false;
      this.messages.push({ role: 'result', text: this.clip(`out of turns (${this.turn} of ${this.spec.maxSteps} used). ${this.timeoutNote()}`) });
    }
    this.done = terminated || truncated;
    return { obs: { text: obsText }, reward, terminated, truncated, info };
  }

  /**
   * What the agent has been shown that a grammar may offer as argument values: the task and
   * every successful tool reply so far (error replies excluded), in order.
   */
  protected shownTexts(): string[] {
    return this.messages.filter((m) => m.role === 'task' || m.role === 'tool').map((m) => m.text);
  }

  expertAction(): string | null {
    return this.started && !this.done ? this.expert() : null;
  }

  frame(): TranscriptFrame {
    return { kind: 'transcript', messages: this.messages.map((m) => ({ ...m })) };
  }

  /** The transcript as a person reads it: the agent's calls prefixed with `> ` (continued lines indented). */
  renderText(): string {
    return this.messages.map((m) => (m.role === 'agent' ? `> ${m.text.replace(/\n/g, '\n  ')}` : m.text)).join('\n');
  }

  /** Turns used so far in this episode. */
  get turnsUsed(): number {
    return this.turn;
  }

  /** Simulated duration of one tool call in ms, log-normal (median, log-space sigma). */
  protected drawLatency(medianMs: number, sigma: number): number {
    return this.latencyRng.logNormal(medianMs, sigma);
  }

  private clip(s: string): string {
    const t = sanitize(s);
    return t.length > OBS_MAX_LENGTH ? `${t.slice(0, OBS_MAX_LENGTH - 3)}...` : t;
  }
}

// ---------------------------------------------------------------------------------------------
// Kwargs: plain JSON from a config file or a URL, so every value is checked with a clear message.

/** Checks one kwarg value; returns what is wrong, or null. `range` says what it accepts (for the docs). */
export type KwargRule = ((value: unknown) => string | null) & { range: string };

const rule = (range: string, check: (v: unknown) => string | null): KwargRule => Object.assign(check, { range });

export const intIn = (lo: number, hi: number): KwargRule =>
  rule(`${lo}..${hi}`, (v) => (typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi ? null : `must be a whole number in ${lo}..${hi}, got ${JSON.stringify(v)}`));

export const numIn = (lo: number, hi: number): KwargRule =>
  rule(`[${lo}, ${hi}]`, (v) => (typeof v === 'number' && Number.isFinite(v) && v >= lo && v <= hi ? null : `must be a number in [${lo}, ${hi}], got ${JSON.stringify(v)}`));

export const isBool: KwargRule = rule('true/false', (v) => (typeof v === 'boolean' ? null : `must be true or false, got ${JSON.stringify(v)}`));

/** The simulated service's latency, kwargs of every tool env that calls one (drawn log-normal per call). */
/** The turn limit every tool env's config holds. */
export interface ToolTurnsConfig {
  /** Turns before truncation; each call (malformed ones too) and the answer is one turn. */
  maxTurns: number;
}

export interface ToolLatencyConfig {
  /** Median simulated duration of one call, ms. */
  latencyMedianMs: number;
  /** Log-space standard deviation of the call duration (1.7 puts p99 near 50 x the median). */
  latencySigma: number;
}

/** The rules of ToolLatencyConfig's kwargs. */
export const LATENCY_RULES = { latencyMedianMs: numIn(0, 60_000), latencySigma: numIn(0, 5) } as const;

/**
 * Merges `kwargs` over `defaults` after checking every key against `rules`. Throws an Error
 * naming the env, the kwarg and the problem (unknown key, wrong type, out of range).
 */
export function readKwargs<T extends object>(
  envId: string,
  kwargs: EnvKwargs,
  defaults: T,
  rules: { [K in keyof T]: KwargRule },
): T {
  const out = { ...defaults } as Record<string, unknown>;
  for (const [key, value] of Object.entries(kwargs)) {
    if (!Object.hasOwn(defaults, key)) {
      throw new Error(`${envId}: unknown kwarg ${JSON.stringify(key)}; known: ${Object.keys(defaults).join(', ')}`);
    }
    const why = (rules as Record<string, KwargRule>)[key](value);
    if (why) throw new Error(`${envId}: kwarg ${key} ${why}`);
    out[key] = value;
  }
  for (const [key, r] of Object.entries(rules as Record<string, KwargRule>)) documentKwarg({ name: key, default: out[key], range: r.range });
  return out as T;
}
