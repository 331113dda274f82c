/**
 * The host's end of a Node sandbox child: it spawns the child, writes a call frame, and reads
 * the answer from the pipe (polling, then napping), turning a dead child or an overrun
 * into a CodeEnvError.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodeEnvError } from '../../core/envs/code/contract.ts';
import { MAX_CELL_VALUE } from '../../core/envs/grid/objects.ts';
import { MAX_VIEW_SIZE } from '../../core/envs/grid/world.ts';
import { batchBytes, batchViews, CHILD, STRING_BYTES } from './nodeGuest.ts';
import type { CodeEnvSandboxOptions } from './quickjs.ts';

/** How long the host polls the answer without sleeping, ms. */
const SPIN_MS = 0.5;
/** Most instances one sandbox call steps; a bigger batch is split into calls of this size. */
export const MAX_BATCH = 256;

/** Cells a slot may need: the largest view a grid env may declare. */
const MAX_IMG = MAX_VIEW_SIZE * MAX_VIEW_SIZE * 3;

/** Bytes of the longest answer frame: its header, the string, and per slot heading, flags, reward and cells. */
const ANSWER_BYTES = 12 + STRING_BYTES + MAX_BATCH * (1 + 1 + 8 + MAX_IMG);

/** What a dead sandbox's stderr says when V8 gave up on its heap. */
const OOM = /heap out of memory|invalid (?:array|table|string) length|allocation failed|Reached heap limit/i;

/** A word to sleep on (Atomics.wait needs one) while polling the answer pipe. */
const NAP = new Int32Array(new SharedArrayBuffer(4));

/**
 * The host's end of one sandbox process: requests and answers as length-prefixed frames over two
 * FIFOs, written and read synchronously (the rollout loop's way: ~28 µs a round trip under load,
 * against ~160 µs for Node's IPC, measured), or polled from the event loop (`requestAsync`, the
 * server's way). The answer pipe is opened read-only and non-blocking: the process is its only
 * writer, so a read of 0 bytes means it ended. At a request's deadline the host kills the process
 * and the module is gone. The process's stderr goes to a file, read once it ended (a fatal "heap
 * out of memory" there reads as the module running out of memory). The pipes' and the file's
 * names are removed once both sides hold them open, so no process exit leaves anything behind.
 * Where `mkfifo` is missing (Windows) the constructor throws and the module runs in QuickJS.
 */
export class Channel {
  /** The batch's numbers (same layout as the guest's): the caller fills ids and nums, an answer fills the rest. */
  readonly v = batchViews(new ArrayBuffer(batchBytes(MAX_BATCH, MAX_IMG)), MAX_BATCH, MAX_IMG);
  /** The sandbox process's pid. */
  readonly pid: number;
  /** Why the sandbox is gone (null while it answers). */
  dead: string | null = null;
  /** The CodeEnvError rule of what ended it ('memory', 'timeout', 'exception'). */
  deadRule = 'exception';
  private closing = false;
  /** Async requests, one after another. */
  private chain: Promise<void> = Promise.resolve();
  /** The async request whose answer is not read yet: `take` reads it (once); `at` its deadline (performance.now() ms). */
  private inflight: { take: () => void; at: number; what: string; limitMs: number } | null = null;
  /** The sandbox process's resident memory once booted, bytes (what a guest's allocation is measured from). */
  private readonly bootRss: number;
  private readonly dir: string;
  private readonly reqFd: number;
  private readonly resFd: number;
  /** The process's stderr file, open for reading (its name is gone once the process booted). */
  private readonly errFd: number;
  private readonly child: ChildProcess;
  /** The answer being read, and how many of its bytes are in. */
  private readonly ans = Buffer.alloc(ANSWER_BYTES + 4);
  private got = 0;
  private booted = false;

  constructor(prelude: string, module: string, private readonly opts: Required<CodeEnvSandboxOptions>) {
    this.dir = mkdtempSync(join(tmpdir(), 'code-env-'));
    const req = join(this.dir, 'req');
    const res = join(this.dir, 'res');
    try {
      execFileSync('mkfifo', [req, res]);
    } catch (e) {
      rmSync(this.dir, { recursive: true, force: true });
      throw e;
    }
    // Read-write, so opening never waits for the process (and writes never fail while it boots).
    this.reqFd = openSync(req, constants.O_RDWR);
    this.resFd = openSync(res, constants.O_RDONLY | constants.O_NONBLOCK);
    const errFd = openSync(join(this.dir, 'stderr'), 'w');
    this.errFd = openSync(join(this.dir, 'stderr'), 'r');
    // The process's heap cap: QuickJS's 64 MiB, plus the process's own ~16 MiB; no inherited environment.
    this.child = spawn(process.execPath, [`--max-old-space-size=${Math.ceil(opts.memoryBytes / 1048576) + 16}`, '--max-semi-space-size=8', '-e', CHILD, req, res], { stdio: ['ignore', 'ignore', errFd], env: {} });
    closeSync(errFd);
    this.child.unref();
    this.child.on('error', () => this.end('did not start', 'exception'));
    this.pid = this.child.pid ?? 0;
    const boot = Buffer.from(JSON.stringify({ cap: MAX_BATCH, strBytes: STRING_BYTES, maxCell: MAX_CELL_VALUE, sources: { prelude, module } }), 'utf8');
    const frame = Buffer.alloc(8 + boot.length);
    frame.writeUInt32LE(4 + boot.length, 0);
    frame.writeInt32LE(0, 4);
    boot.copy(frame, 8);
    this.write(frame);
    if (this.pid === 0 || this.waitSync(opts.loadTimeoutMs + 5000) !== 'done') {
      this.close('did not start');
      throw new CodeEnvError('the code env sandbox (a process of its own) did not start in time', null, 'load');
    }
    this.booted = true;
    // Every end is open: the names can go, so nothing is left behind however this process ends.
    rmSync(this.dir, { recursive: true, force: true });
    this.bootRss = this.rssBytes();
  }

  private end(why: string, rule: string): void {
    if (this.dead !== null) return;
    this.dead = why;
    this.deadRule = rule;
  }

  /**
   * Sends a request and waits for its answer: the answer string, or null when the sandbox could
   * not answer it; throws at the deadline and when the sandbox ended. Blocks this thread (the
   * rollout loop's way). An async request in flight (`requestAsync`) is answered first.
   */
  request(op: number, n: number, arg: number, what: string, limitMs: number): string | null {
    this.settleInflight();
    this.send(op, n, arg, what);
    const r = this.waitSync(limitMs);
    if (r === 'late') throw this.stopAtDeadline(what, limitMs);
    return this.answer(what, r);
  }

  /**
   * The same request without blocking this thread (the server's way: other connections are served
   * while the sandbox works): `fill` writes the request's numbers into the views just before it is
   * sent, `read` reads its answer (once) as soon as it is in. Requests run one at a time in order;
   * a synchronous request arriving meanwhile first waits for this one's answer and reads it out for it.
   */
  requestAsync<T>(op: number, n: number, arg: number, what: string, limitMs: number, fill: () => void, read: (answer: string | null) => T): Promise<T> {
    const run = async (): Promise<T> => {
      let out: { ok: true; v: T } | { ok: false; e: unknown } | null = null;
      let ended = false;
      const take = () => {
        try {
          out = { ok: true, v: read(this.answer(what, ended ? 'ended' : 'done')) };
        } catch (e) {
          out = { ok: false, e };
        }
      };
      fill();
      this.send(op, n, arg, what);
      const at = performance.now() + limitMs;
      this.inflight = { take, at, what, limitMs };
      for (let tick = 0; out === null && this.inflight?.take === take; tick++) {
        const r = this.poll();
        if (r !== 'none') {
          ended = r === 'ended';
          this.inflight = null;
          take();
          break;
        }
        if (performance.now() > at) {
          this.inflight = null;
          throw this.stopAtDeadline(what, limitMs);
        }
        // The next turn of the event loop at once (an answer is usually µs away), then every ms.
        await new Promise((resolve) => (tick < 20 ? setImmediate(resolve) : setTimeout(resolve, 1)));
      }
      // Read by a synchronous request, or the sandbox was stopped meanwhile (its deadline ran out there).
      if (out === null) throw new CodeEnvError(`${what}: the module's sandbox was stopped (it ${this.dead ?? 'was closed'})`, null, this.deadRule === 'timeout' || this.deadRule === 'memory' ? this.deadRule : 'stopped');
      const o = out as { ok: true; v: T } | { ok: false; e: unknown };
      if (!o.ok) throw o.e;
      return o.v;
    };
    const p = this.chain.then(run, run);
    this.chain = p.then(
      () => undefined,
      () => undefined,
    );
    return p;
  }

  /** An async request's answer, read out before a synchronous request uses the channel (waiting for it up to its deadline). */
  private settleInflight(): void {
    const f = this.inflight;
    if (f === null) return;
    this.inflight = null;
    const r = this.waitSync(f.at - performance.now());
    // That request ran away: stop the sandbox; its caller and this one both fail.
    if (r === 'late') throw this.stopAtDeadline(f.what, f.limitMs);
    f.take();
  }

  private send(op: number, n: number, arg: number, what: string): void {
    // Rule 'stopped': this call never ran (a caller may make the env again and retry it).
    if (this.dead !== null) throw new CodeEnvError(`${what}: the module's sandbox was stopped earlier (it ${this.dead}); make the env again`, null, 'stopped');
    const frame = Buffer.alloc(16 + n * 12);
    frame.writeUInt32LE(12 + n * 12, 0);
    frame.writeInt32LE(op, 4);
    frame.writeInt32LE(n, 8);
    frame.writeInt32LE(arg, 12);
    for (let j = 0; j < n; j++) {
      frame.writeInt32LE(this.v.ids[j], 16 + 4 * j);
      frame.writeDoubleLE(this.v.nums[j], 16 + 4 * n + 8 * j);
    }
    this.got = 0;
    this.write(frame);
  }

  private write(frame: Buffer): void {
    for (let w = 0; w < frame.length; ) w += writeSync(this.reqFd, frame, w, frame.length - w);
  }

  /** Reads what the answer pipe holds now: 'done' when a whole answer is in, 'ended' when the process is gone, 'none' otherwise. */
  private poll(): 'done' | 'ended' | 'none' {
    for (;;) {
      if (this.got >= 4 && this.got >= 4 + this.ans.readUInt32LE(0)) return 'done';
      let k: number;
      try {
        k = readSync(this.resFd, this.ans, this.got, this.ans.length - this.got, null);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN') return 'none';
        throw e;
      }
      // No writer: before boot, the process has not opened its end yet; after, it ended.
      if (k === 0) return this.booted ? 'ended' : 'none';
      this.got += k;
    }
  }

  /** Waits for the answer, blocking: spins half a millisecond, then sleeps in growing naps (up to 1 ms). */
  private waitSync(limitMs: number): 'done' | 'ended' | 'late' {
    const end = performance.now() + limitMs;
    const spinEnd = performance.now() + SPIN_MS;
    let nap = 0.02;
    for (;;) {
      const r = this.poll();
      if (r !== 'none') return r;
      const now = performance.now();
      if (now >= end) return 'late';
      if (now > spinEnd) {
        Atomics.wait(NAP, 0, 0, Math.min(nap, end - now));
        nap = Math.min(1, nap * 2);
      }
    }
  }

  /** The error for a request past its deadline, once the sandbox is stopped. */
  private stopAtDeadline(what: string, limitMs: number): CodeEnvError {
    const mib = Math.round(this.opts.memoryBytes / 1048576);
    // A guest allocating without end can reach the deadline before V8 gives up on the heap
    // (its collector works ever harder near the cap): tell that from a loop by what it holds.
    const grown = this.rssBytes() - this.bootRss;
    if (grown > this.opts.memoryBytes * 0.75) {
      this.close(`ran out of memory (limit ${mib} MiB)`, 'memory');
      return new CodeEnvError(`${what} ran out of memory (limit ${mib} MiB): it held ${Math.round(grown / 1048576)} MiB more than at start when its ${limitMs} ms limit stopped its sandbox process`, null, 'memory');
    }
    this.close('was stopped at its deadline', 'timeout');
    return new CodeEnvError(`${what} ran past its ${limitMs} ms limit and was stopped (an infinite loop?); the module's sandbox was stopped with it`, null, 'timeout');
  }

  /** The answer in `ans` (or the news that the process ended): copies the numbers into `v`, returns the string. */
  private answer(what: string, r: 'done' | 'ended'): string | null {
    const mib = Math.round(this.opts.memoryBytes / 1048576);
    if (r === 'ended') {
      // The sandbox process ended during this call: V8 gave up on its heap (a fatal out of memory), or it crashed.
      const buf = Buffer.alloc(8192);
      let err = '';
      try {
        err = buf.toString('utf8', 0, readSync(this.errFd, buf, 0, buf.length, 0));
      } catch {
        // Nothing to read: no reason given.
      }
      const memory = OOM.test(err);
      this.close(memory ? `ran out of memory (limit ${mib} MiB)` : 'crashed', memory ? 'memory' : 'exception');
      throw new CodeEnvError(memory ? `${what} ran out of memory (limit ${mib} MiB): its sandbox process was stopped` : `${what}: the module's sandbox process crashed`, null, memory ? 'memory' : 'exception');
    }
    const a = this.ans;
    const len = a.readInt32LE(4);
    const m = a.readUInt32LE(8);
    let at = 12 + Math.max(0, len);
    if (m > 0) {
      const { dirs, flags, rew, img } = this.v;
      dirs.set(a.subarray(at, at + m));
      flags.set(a.subarray(at + m, at + 2 * m));
      new Uint8Array(rew.buffer, rew.byteOffset, 8 * m).set(a.subarray(at + 2 * m, at + 10 * m));
      at += 10 * m;
      img.set(a.subarray(at, 4 + a.readUInt32LE(0)));
    }
    if (len === -2) throw new CodeEnvError(`${what} returned more than ${STRING_BYTES >> 20} MiB of JSON in one call (refused, not copied)`, null, 'contract');
    return len < 0 ? null : a.toString('utf8', 12, 12 + len);
  }

  /** The sandbox process's resident memory, bytes (Linux /proc; 0 where it cannot be read). */
  private rssBytes(): number {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'));
      return m ? Number(m[1]) * 1024 : 0;
    } catch {
      return 0;
    }
  }

  /** Stops the sandbox: kills its process (a guest in `while (true) {}` answers nothing) and lets go of its pipes and folder. */
  close(why = 'was closed', rule = 'exception'): void {
    this.end(why, rule);
    if (this.closing) return;
    this.closing = true;
    this.child.kill('SIGKILL');
    for (const fd of [this.reqFd, this.resFd, this.errFd]) {
      try {
        closeSync(fd);
      } catch {
        // Already closed.
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
