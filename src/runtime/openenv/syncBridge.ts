/**
 * Synchronous calls into an asynchronous thread, over one SharedArrayBuffer: the env contract is
 * synchronous (reset/step return values), a network env is not, and the rollout loops stay as
 * they are when the waiting happens here. The calling thread writes a request into the buffer and
 * blocks in `Atomics.wait` (allowed in Node's main thread and in workers, never on a page's main
 * thread); the I/O thread, woken by `Atomics.waitAsync`, does the async work on its own event loop
 * and writes the reply back. No message crosses `postMessage` while the caller blocks, so it works
 * even where a blocked thread cannot hand messages on (a nested Web Worker).
 *
 * Layout: Int32 [0] state (0 idle, 1 request waiting, 2 reply waiting), [1] payload bytes; the
 * payload (UTF-8 JSON) from byte HEADER_BYTES.
 */

const HEADER_BYTES = 16;

/** `Atomics.waitAsync` (ES2024: Node 16+, Chrome 87+; the project's TypeScript lib predates it). */
const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: Promise<string> | string } }).waitAsync;
const IDLE = 0;
const REQUEST = 1;
const REPLY = 2;

/** Bytes of one bridge's buffer: a request or reply larger than this (less the header) is refused. */
export const BRIDGE_BYTES = 1 << 20;

/** A request as the I/O thread sees it. */
export interface BridgeRequest {
  op: string;
  args: unknown;
}

/** A reply: a value, or an error with a code and message (rebuilt into an Error on the calling side). */
export type BridgeReply = { ok: true; value: unknown } | { ok: false; code: string; message: string };

function write(buf: SharedArrayBuffer, value: unknown): boolean {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  if (bytes.length > buf.byteLength - HEADER_BYTES) return false;
  new Uint8Array(buf, HEADER_BYTES, bytes.length).set(bytes);
  new Int32Array(buf, 0, 2)[1] = bytes.length;
  return true;
}

function read(buf: SharedArrayBuffer): unknown {
  const n = new Int32Array(buf, 0, 2)[1];
  // TextDecoder refuses views of shared memory: copy out first.
  const copy = new Uint8Array(n);
  copy.set(new Uint8Array(buf, HEADER_BYTES, n));
  return JSON.parse(new TextDecoder().decode(copy));
}

/** An error from the other side of the bridge, with its code (e.g. an OpenEnvError's). */
export class BridgeError extends Error {
  override name = 'OpenEnvError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The calling (blocking) side. */
export class SyncCaller {
  private readonly header: Int32Array;
  private broken: BridgeError | null = null;

  constructor(readonly buffer: SharedArrayBuffer) {
    this.header = new Int32Array(buffer, 0, 2);
  }

  /**
   * Sends `{op, args}` and blocks until the reply, at most `timeoutMs`. A reply that does not come
   * in time leaves the buffer in an unknown state, so the bridge refuses every later call.
   */
  call(op: string, args: unknown, timeoutMs: number): unknown {
    if (this.broken) throw this.broken;
    if (!write(this.buffer, { op, args } satisfies BridgeRequest)) throw new BridgeError('VALIDATION_ERROR', `${op}: the request is over the ${BRIDGE_BYTES}-byte bridge`);
    Atomics.store(this.header, 0, REQUEST);
    Atomics.notify(this.header, 0);
    const deadline = Date.now() + timeoutMs;
    while (Atomics.load(this.header, 0) === REQUEST) {
      const left = deadline - Date.now();
      if (left <= 0 || Atomics.wait(this.header, 0, REQUEST, left) === 'timed-out') {
        if (Atomics.load(this.header, 0) === REPLY) break;
        this.broken = new BridgeError('TIMEOUT', `the network thread did not answer ${op} within ${timeoutMs} ms (it is stuck or gone); this env cannot be used further`);
        throw this.broken;
      }
    }
    const reply = read(this.buffer) as BridgeReply;
    Atomics.store(this.header, 0, IDLE);
    if (!reply.ok) throw new BridgeError(reply.code, reply.message);
    return reply.value;
  }
}

/**
 * The I/O side: answers each request with `handle` (async), one at a time, until `stop()`.
 * Uses `Atomics.waitAsync`, so its event loop keeps running sockets and timers meanwhile.
 */
export function serveBridge(buffer: SharedArrayBuffer, handle: (req: BridgeRequest) => Promise<unknown>): { stop(): void } {
  const header = new Int32Array(buffer, 0, 2);
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      const state = Atomics.load(header, 0);
      if (state !== REQUEST) {
        const w = waitAsync(header, 0, state);
        if (w.async) await w.value;
        continue;
      }
      let reply: BridgeReply;
      try {
        reply = { ok: true, value: await handle(read(buffer) as BridgeRequest) };
      } catch (e) {
        const err = e as { code?: unknown; message?: unknown };
        reply = { ok: false, code: typeof err?.code === 'string' ? err.code : 'EXECUTION_ERROR', message: typeof err?.message === 'string' ? err.message : String(e) };
      }
      if (!write(buffer, reply)) write(buffer, { ok: false, code: 'MALFORMED_REPLY', message: `the reply is over the ${BRIDGE_BYTES}-byte bridge` } satisfies BridgeReply);
      Atomics.store(header, 0, REPLY);
      Atomics.notify(header, 0);
    }
  };
  void loop();
  return {
    stop() {
      stopped = true;
      Atomics.notify(header, 0);
    },
  };
}
