/**
 * One OpenEnv WebSocket (`/ws`): one env session per socket, messages `{type, data}` answered in
 * the order they were sent. Requests wait in a queue for their replies, each with its own timeout;
 * a timeout, a malformed reply or a lost connection ends the socket (replies after it could no
 * longer be matched to requests), and every request still waiting fails with the reason.
 */
import { OpenEnvError, serverError } from './errors.ts';

/** The part of the WebSocket API this uses: the browser's WebSocket and the `ws` package both fit. */
export interface WsLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
}

/** A WebSocket constructor (the browser's global, or `ws` in Node 20, which has none). */
export type WsConstructor = new (url: string) => WsLike;

interface Waiting {
  expect: string;
  what: string;
  resolve: (data: unknown) => void;
  reject: (e: OpenEnvError) => void;
  timer: ReturnType<typeof setTimeout>;
}

const OPEN = 1;

export class WsChannel {
  private readonly queue: Waiting[] = [];
  private dead: OpenEnvError | null = null;

  private constructor(
    private readonly ws: WsLike,
    readonly url: string,
  ) {
    ws.onmessage = (ev) => this.onMessage(ev.data);
    ws.onclose = (ev) => this.fail(new OpenEnvError('CONNECTION_LOST', `${url}: the connection closed (code ${ev.code}${ev.reason ? `: ${ev.reason}` : ''})`));
    ws.onerror = () => this.fail(new OpenEnvError('CONNECTION_LOST', `${url}: the connection failed`));
  }

  /**
   * Opens `url`, failing with CONNECT_FAILED when it does not open within `timeoutMs`. A server at
   * capacity accepts the socket, sends CAPACITY_REACHED and closes it: the first request sees that.
   */
  static open(Ws: WsConstructor, url: string, timeoutMs: number): Promise<WsChannel> {
    return new Promise((resolve, reject) => {
      let ws: WsLike;
      try {
        ws = new Ws(url);
      } catch (e) {
        reject(new OpenEnvError('CONNECT_FAILED', `${url}: cannot open a WebSocket: ${(e as Error).message}`));
        return;
      }
      // Messages that arrive before the channel takes the socket over (an at-capacity error sent on
      // connect) are kept and replayed into it.
      const early: unknown[] = [];
      const timer = setTimeout(() => {
        ws.onopen = ws.onerror = ws.onclose = null;
        ws.close();
        reject(new OpenEnvError('CONNECT_FAILED', `${url}: no WebSocket connection within ${timeoutMs} ms (is the server running, and is the address right?)`));
      }, timeoutMs);
      ws.onmessage = (ev) => early.push(ev.data);
      ws.onerror = () => undefined;
      ws.onclose = (ev) => {
        clearTimeout(timer);
        reject(new OpenEnvError('CONNECT_FAILED', `${url}: the WebSocket did not open (code ${ev.code}${ev.reason ? `: ${ev.reason}` : ''}): no server there, or no OpenEnv /ws route`));
      };
      ws.onopen = () => {
        clearTimeout(timer);
        const ch = new WsChannel(ws, url);
        for (const d of early) ch.onMessage(d);
        resolve(ch);
      };
    });
  }

  /** Whether requests can still be sent. */
  get alive(): boolean {
    return this.dead === null && this.ws.readyState === OPEN;
  }

  /** Why the channel ended (null while alive). */
  get failure(): OpenEnvError | null {
    return this.dead;
  }

  /** Sends `{type, data}` and resolves with the `data` of the reply of type `expect`. */
  request(type: string, data: unknown, expect: string, timeoutMs: number): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    return new Promise((resolve, reject) => {
      const what = type === 'mcp' && typeof data === 'object' && data !== null ? `mcp ${(data as { method?: string }).method}` : type;
      const timer = setTimeout(() => this.fail(new OpenEnvError('TIMEOUT', `${this.url}: no reply to ${what} within ${timeoutMs} ms (the server is slow or stuck; the connection was dropped)`)), timeoutMs);
      this.queue.push({ expect, what, resolve, reject, timer });
      try {
        this.ws.send(JSON.stringify(data === undefined ? { type } : { type, data }));
      } catch (e) {
        this.fail(new OpenEnvError('CONNECTION_LOST', `${this.url}: cannot send ${what}: ${(e as Error).message}`));
      }
    });
  }

  /** Closes the socket politely (OpenEnv's `close` message), failing anything still waiting. */
  close(): void {
    if (this.alive) {
      try {
        this.ws.send(JSON.stringify({ type: 'close' }));
      } catch {
        // Already going: nothing to tell the server.
      }
    }
    this.fail(new OpenEnvError('CONNECTION_LOST', `${this.url}: the client closed the session`));
  }

  private onMessage(raw: unknown): void {
    if (this.dead) return;
    let msg: unknown;
    try {
      msg = JSON.parse(typeof raw === 'string' ? raw : String(raw));
    } catch {
      return this.fail(new OpenEnvError('MALFORMED_REPLY', `${this.url}: the server sent a message that is not JSON: ${String(raw).slice(0, 80)}`));
    }
    const m = msg as { type?: unknown; data?: unknown };
    if (typeof msg !== 'object' || msg === null || typeof m.type !== 'string') {
      return this.fail(new OpenEnvError('MALFORMED_REPLY', `${this.url}: the server sent a message without a type: ${JSON.stringify(msg).slice(0, 80)}`));
    }
    const head = this.queue.shift();
    if (m.type === 'error') {
      const d = (m.data ?? {}) as { code?: unknown; message?: unknown };
      const err = serverError(this.url, d.code, d.message);
      if (!head) return this.fail(err);
      clearTimeout(head.timer);
      // A refused request leaves the session as it was; capacity and session errors end it.
      if (err.code === 'CAPACITY_REACHED' || err.code === 'SESSION_ERROR') this.fail(err);
      head.reject(err);
      return;
    }
    if (!head) return this.fail(new OpenEnvError('MALFORMED_REPLY', `${this.url}: the server sent a '${m.type}' message nobody asked for`));
    clearTimeout(head.timer);
    if (m.type !== head.expect) {
      this.queue.unshift(head);
      return this.fail(new OpenEnvError('MALFORMED_REPLY', `${this.url}: expected a '${head.expect}' reply to ${head.what}, got '${m.type}'`));
    }
    head.resolve(m.data);
  }

  private fail(e: OpenEnvError): void {
    if (!this.dead) {
      this.dead = e;
      this.ws.onmessage = this.ws.onclose = this.ws.onerror = null;
      try {
        this.ws.close();
      } catch {
        // Closing a socket that never opened or already closed.
      }
    }
    for (const w of this.queue.splice(0)) {
      clearTimeout(w.timer);
      w.reject(e);
    }
  }
}
