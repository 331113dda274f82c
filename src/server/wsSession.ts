/**
 * One WebSocket session (`/ws`): one env instance per connection, messages
 * `{"type": "reset"|"step"|"state"|"close"|"mcp", "data": {...}}` answered in order, and flow
 * control so a client that sends without reading cannot grow the server's memory.
 */
import type { RawData, WebSocket } from 'ws';
import { WireError, toJson, type Json } from './wire.ts';
import { readResetBody, resetSession, sessionState, stepSession, type Session } from './sessions.ts';
import { isObject } from './http.ts';
import { mcp, type Mount, type ServerContext } from './mounts.ts';
import type { ServeOptions } from './options.ts';

type WsLimits = Pick<ServeOptions, 'wsMaxPending' | 'wsMaxBufferedBytes' | 'wsStallS' | 'wsMaxQueued'>;

/**
 * Flow control: a client that sends without reading its replies must not grow the server's
 * memory (2 million small messages grew it by 1 GB). Messages waiting for replies (`pending`)
 * and reply bytes not yet taken by the socket (`unflushed`) each pause reading from the
 * connection past their limit (until both fall to half), so TCP holds the client back; past
 * wsMaxQueued messages, or paused with replies untaken for wsStallS, the connection is closed
 * with 1008 and the reason.
 */
class WsFlow {
  pending = 0;
  private unflushed = 0;
  private stall: ReturnType<typeof setTimeout> | null = null;
  hungUp = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly o: WsLimits,
  ) {}

  hangUp(reason: string): void {
    if (this.hungUp) return;
    this.hungUp = true;
    if (this.stall) clearTimeout(this.stall);
    // The close frame waits behind the unread replies: a client that reads nothing never sees it, so the socket goes 1 s later.
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(1008, reason.slice(0, 123));
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }

  private clearStall(): void {
    if (this.stall) {
      clearTimeout(this.stall);
      this.stall = null;
    }
  }

  flow(): void {
    const { ws, o } = this;
    if (ws.readyState !== ws.OPEN || this.hungUp) return;
    if (this.pending >= o.wsMaxPending || this.unflushed >= o.wsMaxBufferedBytes) {
      if (!ws.isPaused) ws.pause();
    } else if (ws.isPaused && this.pending < o.wsMaxPending / 2 && this.unflushed < o.wsMaxBufferedBytes / 2) ws.resume();
    // Paused with replies waiting for the client: the stall clock runs (each reply it takes restarts it).
    if (ws.isPaused && this.unflushed > 0) this.stall ??= setTimeout(() => this.hangUp(`client not reading: ${this.unflushed} bytes of replies untaken for ${o.wsStallS} s`), o.wsStallS * 1000);
    else this.clearStall();
  }

  send(type: string, data: Json): void {
    const { ws } = this;
    if (ws.readyState !== ws.OPEN) return;
    const text = JSON.stringify({ type, data });
    const n = Buffer.byteLength(text);
    this.unflushed += n;
    // Called once the reply is handed to the kernel: progress, so the stall clock starts again.
    ws.send(text, () => {
      this.unflushed -= n;
      this.clearStall();
      this.flow();
    });
    this.flow();
  }
}

/** The fields each message type may carry. */
const ALLOWED: Record<string, readonly string[]> = { reset: ['type', 'data'], step: ['type', 'data'], state: ['type'], close: ['type'], mcp: ['type', 'data'] };

/** A message parsed and checked: its type is one of ALLOWED's, with no other fields. */
function readMessage(raw: RawData): Record<string, unknown> & { type: string } {
  let msg: unknown;
  try {
    msg = JSON.parse(raw.toString());
  } catch (e) {
    throw new WireError(400, `Invalid JSON: ${(e as Error).message}`, 'INVALID_JSON');
  }
  if (!isObject(msg)) throw new WireError(422, [{ type: 'model_type', loc: [], msg: 'a message is an object {"type": ..., "data": ...}', input: toJson(msg) }], 'VALIDATION_ERROR');
  const type = msg.type;
  if (typeof type !== 'string' || !(type in ALLOWED)) throw new WireError(400, `Unknown message type: ${typeof type === 'string' ? type : JSON.stringify(type ?? null)} (expected reset, step, state, close or mcp)`, 'UNKNOWN_TYPE');
  const extra = Object.keys(msg).filter((k) => !ALLOWED[type].includes(k));
  if (extra.length > 0) throw new WireError(422, extra.map((k) => ({ type: 'extra_forbidden', loc: [k], msg: `Extra inputs are not permitted in a ${type} message` })), 'VALIDATION_ERROR');
  return msg as Record<string, unknown> & { type: string };
}

/** Answers one checked message on `session`. */
async function answer(ctx: ServerContext, ws: WebSocket, f: WsFlow, session: Session, msg: Record<string, unknown> & { type: string }): Promise<void> {
  switch (msg.type) {
    case 'reset': {
      if (msg.data !== undefined && !isObject(msg.data)) throw new WireError(422, [{ type: 'dict_type', loc: ['data'], msg: 'Input should be a valid dictionary', input: toJson(msg.data) }], 'VALIDATION_ERROR');
      return f.send('observation', (await resetSession(session, readResetBody(msg.data ?? {}, ['data']), ctx.episode)) as unknown as Json);
    }
    case 'step':
      if (!('data' in msg)) throw new WireError(422, [{ type: 'missing', loc: ['data'], msg: 'Field required: the action' }], 'VALIDATION_ERROR');
      return f.send('observation', (await stepSession(session, msg.data, ['data'], ctx.episode)) as unknown as Json);
    case 'state':
      return f.send('state', sessionState(session));
    case 'close':
      ws.close(1000, 'closed by client');
      return;
    case 'mcp':
      return f.send('mcp', mcp(msg.data));
  }
}

/** Serves one WebSocket connection on env `m` for `client`, under store key `key`. */
export function onWsSession(ctx: ServerContext, ws: WebSocket, m: Mount, client: string, key: string): void {
  const { store, opts } = ctx;
  const f = new WsFlow(ws, opts);
  const sendError = (e: unknown) => {
    if (e instanceof WireError) {
      f.send('error', { message: e.message, code: e.wsCode, ...(Array.isArray(e.detail) ? { errors: e.detail as unknown as Json } : {}) });
    } else {
      console.error(`serve: ws ${m.envId}: ${(e as Error)?.stack ?? String(e)}`);
      f.send('error', { message: String((e as Error)?.message ?? e), code: 'EXECUTION_ERROR' });
    }
  };
  ws.on('error', () => undefined);
  let session: Session;
  try {
    session = store.create(key, m.envId, client);
  } catch (e) {
    sendError(e);
    ws.close(1013, 'server at capacity');
    return;
  }
  session.onClose = () => {
    if (ws.readyState === ws.OPEN) ws.close(1000, 'session closed');
  };
  ws.on('close', () => store.delete(key));
  ws.on('message', (raw: RawData) => {
    if (f.hungUp) return;
    if (++f.pending > opts.wsMaxQueued) return f.hangUp(`more than ${opts.wsMaxQueued} messages waiting for replies: read the replies, or send fewer at once`);
    f.flow();
    store.get(key);
    session
      .run(async () => answer(ctx, ws, f, session, readMessage(raw)))
      .catch(sendError)
      .finally(() => {
        f.pending--;
        f.flow();
      });
  });
}
