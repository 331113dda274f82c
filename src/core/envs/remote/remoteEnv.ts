/**
 * # remote/openenv
 *
 * ## Description
 * An env that runs on an OpenEnv server (the playground's own `npm run serve`, or any OpenEnv
 * 0.2 server, e.g. on a hub), played over the network: the text it shows and the text the policy
 * writes travel as OpenEnv's reset/step messages. Two modes: 'text', the server's env takes text
 * actions (`{"text": ...}`) and shows `observation.text`; 'mcp', the server offers MCP tools
 * (tools/list) and each action the policy writes, `name(arg, ...)`, becomes a `call_tool` step
 * with the arguments matched to the tool's schema in order.
 *
 * ## Observation
 * `{ text }`, clipped to 240 characters and put inside the shared vocabulary (other characters
 * become '?'). In 'mcp' mode the first observation lists the tools as `name(arg, ...)`.
 *
 * ## Actions
 * One line of text per turn, at most 80 characters, sent as it is ('text'); or a tool call
 * ('mcp'), where one that does not parse or names no tool is malformed: an `error:` reply made
 * here, the turn spent, nothing sent.
 *
 * ## Reward
 * The server's. `info.success` is the server's where it reports one, else a positive reward on
 * the step that ends the episode. `info.wireMs` is the real time the step took over the network.
 *
 * ## Termination
 * The server's `terminated`/`truncated` where its observation has them, else its `done` as
 * terminated. Truncated here after `maxTurns` turns when the server has not ended it.
 *
 * ## Kwargs
 * See `RemoteEnvConfig`. Each instance holds its own session; a dead or slow server makes reset
 * or step throw a named error (OpenEnvError's code and sentence), never hang.
 */
import type { EnvSpec, Info, ResetOptions, ResetResult, StepResult, ToolEnv, ToolObs, TranscriptFrame, TranscriptMessage } from '../types.ts';
import type { EnvKwargs } from '../registry.ts';
import { sanitize } from '../../text/codec.ts';
import { ACTION_MAX_LENGTH, OBS_MAX_LENGTH, intIn, isBool, readKwargs, toolActionSpace, toolObservationSpace, type KwargRule } from '../tools/base.ts';
import { openRemoteSession, type RemoteResult, type RemoteSession, type RemoteTool } from './session.ts';
import { argumentsFor, parseToolCall, toolSignature } from './toolCalls.ts';

export const REMOTE_ENV_ID = 'remote/openenv';

export interface RemoteEnvConfig {
  /** Server address: ws://host:port (or http://, wss://, https://), with the env's path prefix if it is served under one. */
  url: string;
  /** 'text': the server's env takes `{"text"}` actions; 'mcp': its MCP tools are the actions. */
  mode: 'text' | 'mcp';
  /** 'auto': WebSocket, else HTTP; 'ws' or 'http' to insist on one. */
  transport: 'auto' | 'ws' | 'http';
  /** Turns before this side truncates an episode the server has not ended (the token trainers size episodes by it). */
  maxTurns: number;
  /** Longest wait for one reply, ms: past it the step fails with TIMEOUT instead of waiting on. */
  timeoutMs: number;
  /** Env kwargs sent with every reset (OpenEnv's reset body carries them; the server makes its env with them), e.g. `{"maxDigits": 2}`. */
  resetKwargs: Record<string, unknown>;
  /** Read the expert's next action from the server's state (`expert_action`, which the playground's server sends), for warm starts; one more round trip per expert step. */
  expert: boolean;
}

export const REMOTE_ENV_DEFAULTS: RemoteEnvConfig = { url: '', mode: 'text', transport: 'auto', maxTurns: 4, timeoutMs: 10_000, resetKwargs: {}, expert: true };

const oneOf = (...xs: string[]): KwargRule => Object.assign((v: unknown) => (xs.includes(v as string) ? null : `must be one of ${xs.join(', ')}, got ${JSON.stringify(v)}`), { range: xs.join(' | ') });
const address: KwargRule = Object.assign((v: unknown) => (typeof v === 'string' && (v === '' || /^(wss?|https?):\/\/[^/\s]+/.test(v)) ? null : `must be a server address such as ws://127.0.0.1:8000, got ${JSON.stringify(v)}`), { range: 'ws://… | wss://… | http://… | https://…' });

const plainObject: KwargRule = Object.assign((v: unknown) => (typeof v === 'object' && v !== null && !Array.isArray(v) && !('seed' in v) ? null : `must be an object of env kwargs (without seed: the trainer seeds each reset), got ${JSON.stringify(v)}`), { range: '{ kwarg: value, ... }' });

const RULES = { url: address, resetKwargs: plainObject, mode: oneOf('text', 'mcp'), transport: oneOf('auto', 'ws', 'http'), maxTurns: intIn(1, 64), timeoutMs: intIn(100, 600_000), expert: isBool };

/** Reads the kwargs (throws naming the kwarg and the problem). */
export function readRemoteKwargs(kwargs: EnvKwargs): RemoteEnvConfig {
  return readKwargs(REMOTE_ENV_ID, kwargs, REMOTE_ENV_DEFAULTS, RULES);
}

const clip = (s: string): string => {
  const t = sanitize(s);
  return t.length > OBS_MAX_LENGTH ? `${t.slice(0, OBS_MAX_LENGTH - 3)}...` : t;
};

/** The text of an observation: its `text`, else an MCP call's `result`/`error`, else its fields as JSON. */
function observationText(obs: Record<string, unknown>): string {
  if (typeof obs.text === 'string') return obs.text;
  if (obs.error !== undefined && obs.error !== null) return `error: ${typeof obs.error === 'string' ? obs.error : JSON.stringify(obs.error)}`;
  if (obs.result !== undefined) {
    const r = obs.result as { content?: { text?: unknown }[]; data?: unknown };
    if (Array.isArray(r?.content)) return r.content.map((c) => (typeof c?.text === 'string' ? c.text : '')).join(' ');
    const d = r?.data ?? r;
    return typeof d === 'string' || typeof d === 'number' ? String(d) : JSON.stringify(d);
  }
  const { terminated: _t, truncated: _u, info: _i, metadata: _m, reward: _r, done: _d, ...rest } = obs;
  return JSON.stringify(rest);
}

/** Sessions of envs nobody holds any more are closed, so a run that makes envs freely does not fill the server. */
const closer = typeof FinalizationRegistry === 'undefined' ? null : new FinalizationRegistry<RemoteSession>((s) => s.close());

export class RemoteEnv implements ToolEnv {
  readonly spec: EnvSpec;
  readonly config: RemoteEnvConfig;
  private session: RemoteSession | null = null;
  private tools: RemoteTool[] | null = null;
  private messages: TranscriptMessage[] = [];
  private turn = 0;
  private started = false;
  private done = false;
  /** The expert's action for the current turn, once asked (one state round trip per turn). */
  private expertCache: { turn: number; action: string | null } | null = null;

  constructor(kwargs: EnvKwargs = {}) {
    this.config = readRemoteKwargs(kwargs);
    const where = this.config.url || '(no address set)';
    this.spec = {
      id: REMOTE_ENV_ID,
      title: `Remote env at ${where}`,
      description: `The env served at ${where} over OpenEnv (${this.config.mode === 'mcp' ? 'its MCP tools are the actions' : 'text observations, text actions'}).`,
      family: 'remote',
      observationSpace: toolObservationSpace(),
      actionSpace: toolActionSpace(),
      rewardRange: [-1, 1],
      maxSteps: this.config.maxTurns,
    };
  }

  private open(): RemoteSession {
    if (!this.config.url) throw new Error(`${REMOTE_ENV_ID}: no server address: set env.kwargs.url (e.g. ws://127.0.0.1:8000, what npm run serve prints), or pass --env-url`);
    if (!this.session) {
      this.session = openRemoteSession({ url: this.config.url, transport: this.config.transport, timeoutMs: this.config.timeoutMs });
      closer?.register(this, this.session, this);
    }
    if (this.config.mode === 'mcp') this.tools ??= this.session.listTools();
    return this.session;
  }

  reset(opts: ResetOptions = {}): ResetResult<ToolObs> {
    const s = this.open();
    const r = s.reset(opts.seed === undefined ? { ...this.config.resetKwargs } : { ...this.config.resetKwargs, seed: opts.seed });
    this.turn = 0;
    this.started = true;
    this.done = false;
    this.expertCache = null;
    let text = observationText(r.observation);
    if (this.tools) text = `${text} tools: ${this.tools.map(toolSignature).join(', ')}.`;
    text = clip(text);
    this.messages = [{ role: 'task', text }];
    return { obs: { text }, info: { turn: 0 } };
  }

  step(action: string): StepResult<ToolObs> {
    if (!this.started) throw new Error(`${REMOTE_ENV_ID}: step() before reset()`);
    if (this.done) throw new Error(`${REMOTE_ENV_ID}: step() after the episode ended at turn ${this.turn}; call reset() first`);
    this.turn++;
    const shown = sanitize(action);
    this.messages.push({ role: 'agent', text: shown.length > 2 * ACTION_MAX_LENGTH ? `${shown.slice(0, 2 * ACTION_MAX_LENGTH)}...` : shown });
    let wire: Record<string, unknown>;
    if (this.tools) {
      const call = parseToolCall(action, this.tools);
      if (!call.ok) return this.finish({ observation: { text: `error: ${call.error}` }, reward: 0, done: false }, { malformed: true, wireMs: 0 }, 'error');
      wire = { type: 'call_tool', tool_name: call.tool.name, arguments: argumentsFor(call.tool, call.args) };
    } else wire = { text: action };
    const t0 = performance.now();
    const r = this.session!.step(wire);
    const extra: Info = { wireMs: performance.now() - t0 };
    if (this.tools) extra.toolCall = (wire.tool_name as string) ?? undefined;
    return this.finish(r, extra, null);
  }

  /** Turns a server reply into the step result (termination, success, transcript). */
  private finish(r: RemoteResult, extra: Info, role: TranscriptMessage['role'] | null): StepResult<ToolObs> {
    const obs = r.observation;
    const serverInfo = typeof obs.info === 'object' && obs.info !== null && !Array.isArray(obs.info) ? (obs.info as Info) : {};
    // The wait already happened on the wire (the step blocked for it): nothing more to simulate.
    const info: Info = { ...serverInfo, ...extra, turn: this.turn, latencyMs: 0 };
    const reward = r.reward ?? 0;
    let terminated = typeof obs.terminated === 'boolean' ? obs.terminated : r.done;
    let truncated = typeof obs.truncated === 'boolean' ? obs.truncated && !terminated : false;
    if (r.done && !terminated && !truncated) terminated = true;
    if (!terminated && !truncated && this.turn >= this.spec.maxSteps) truncated = true;
    if ((terminated || truncated) && typeof serverInfo.success !== 'boolean') info.success = terminated && reward > 0;
    const text = clip(observationText(obs));
    this.messages.push({ role: role ?? (terminated ? 'result' : info.toolFailed || info.malformed ? 'error' : 'tool'), text });
    if (truncated) this.messages.push({ role: 'result', text: `out of turns (${this.turn} of ${this.spec.maxSteps} used).` });
    this.done = terminated || truncated;
    return { obs: { text }, reward, terminated, truncated, info };
  }

  expertAction(): string | null {
    if (!this.started || this.done || !this.config.expert || this.tools) return null;
    if (this.expertCache?.turn === this.turn) return this.expertCache.action;
    const ea = this.session!.state().expert_action as { text?: unknown } | null | undefined;
    const action = typeof ea?.text === 'string' ? ea.text : null;
    this.expertCache = { turn: this.turn, action };
    return action;
  }

  frame(): TranscriptFrame {
    return { kind: 'transcript', messages: this.messages.map((m) => ({ ...m })) };
  }

  renderText(): string {
    return this.messages.map((m) => (m.role === 'agent' ? `> ${m.text}` : m.text)).join('\n');
  }

  /** Ends the session on the server (the next reset opens a new one). */
  close(): void {
    closer?.unregister(this);
    this.session?.close();
    this.session = null;
    this.tools = null;
  }
}
