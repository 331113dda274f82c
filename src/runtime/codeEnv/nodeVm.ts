/**
 * The code envs' fast sandbox in Node (CLI train/serve, the Node rollout workers, the bench): the
 * module runs at V8 speed in a `node:vm` context inside a process of its own (one per loaded
 * module; nodeGuest.ts's CHILD), reached through a relay thread (WORKER). The context holds nothing
 * of Node's (no `process`, `require`, `fetch`, timers or `console`; code generation from strings
 * off; `Promise`, `Atomics`, `SharedArrayBuffer`, `WebAssembly`, `WeakRef` and
 * `FinalizationRegistry` removed, so nothing the guest starts runs after a call returns;
 * `ArrayBuffer`, `DataView` and the typed arrays removed once the driver holds its own, since their
 * bytes are outside the heap cap); the process has a heap cap (`--max-old-space-size`, QuickJS's
 * 64 MiB plus its own), and a process because V8 ends the whole process when some allocations
 * fail (`new Array(5e7).fill(1)` is a fatal "heap out of memory", which a worker thread's
 * `resourceLimits` did not contain: it aborted `npm run train` and the server); the host enforces
 * each call's deadline itself: it waits for the answer in `Atomics.wait` with a timeout and, past
 * it, kills the process, which stops `while (true) {}` wherever it is. Calls are synchronous (the
 * `Env` interface), through shared memory to the relay, which forwards them over IPC. Grid envs
 * only, and only modules with no `async` / `import` in the source; the rest stay in QuickJS
 * (`load` returns null), as does every check (checkCodeEnv).
 *
 * Nobody touches a guest object: the process calls fixed scripts (`__vec.call(n)`,
 * `__vec.stepMany(n)`), keeps only primitive string answers, and copies numbers between the
 * guest's own ArrayBuffer (made by the driver's init, which the worker takes off the context's
 * global before any user code runs, so the guest never holds it; read through the worker's
 * views) and the shared buffer; no host object is ever put into the context (a host object's
 * `constructor.constructor` is a Function whose code generation is on: the classic vm escape).
 *
 * Vector stepping (CodeEnvBatch): `stepMany` steps up to MAX_BATCH instances in one request, the
 * guest writing each valid step straight into the numbers (cells, heading, reward, flags); a step
 * with a non-empty info, or anything the fast path does not accept, comes back as JSON for the
 * host's usual checks. One request's deadline covers the whole batch.
 */
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { CodeEnvError, exportLine, type RawStep } from '../../core/envs/code/contract.ts';
import type { CodeEnvBatch, CodeEnvGuest, CodeEnvInstance, FastCodeEnvEngine } from '../../core/envs/code/codeEnv.ts';
import { MAX_CELL_VALUE } from '../../core/envs/grid/objects.ts';
import { MAX_VIEW_SIZE } from '../../core/envs/grid/world.ts';
import { batchBytes, batchViews, CHILD, DRIVER, ENDED, HARDEN, OP, STATE, STRING_BYTES, WORKER } from './nodeGuest.ts';
import { DEFAULT_CODE_ENV_SANDBOX, PRELUDE, wrapModule, type CodeEnvSandboxOptions } from './quickjs.ts';

/** Atomics.waitAsync (Node 16+; not in this project's TypeScript lib): resolves once the word is no longer `value`, or at the timeout. */
const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, value: number, timeoutMs: number): { async: boolean; value: Promise<string> | string } }).waitAsync;

/** Most instances one sandbox call steps; a bigger batch is split into calls of this size. */

/** How long the host spins on the answer before it sleeps, ms. */
const SPIN_MS = 0.5;
export const MAX_BATCH = 256;
/** Loaded modules kept per thread (as in QuickJS). */
const MAX_LOADED = 8;
/**
 * Modules the fast sandbox leaves to QuickJS: anything that could make a promise or import, and
 * anything naming a typed array, ArrayBuffer or DataView: their bytes live outside the V8 heap
 * that `resourceLimits` caps (a guest kept 2 GiB of Uint8Arrays in a 64 MiB sandbox), while
 * QuickJS's all live in its capped WebAssembly memory. The V8 context has none (DRIVER deletes them).
 */
const NEEDS_QUICKJS = /\b(?:async|import|ArrayBuffer|DataView|(?:Big)?(?:Int|Uint|Float)(?:8|16|32|64)(?:Clamped)?Array)\b/;

/**
 * Standard globals handed to the module's factory as parameters: in a vm context every global
 * read goes through Node's interceptor on the context's global object (~0.7 µs of the empty-room
 * port's 2.4 µs step); a parameter reads at main-realm speed (1.7 µs). Only names every context has.
 */
const FAST_GLOBALS = 'Object, Array, Number, Boolean, String, Symbol, Date, RegExp, Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, JSON, Math, Map, Set, WeakMap, WeakSet, Reflect, BigInt, parseInt, parseFloat, isFinite, isNaN';

/** wrapModule's factory, closed over FAST_GLOBALS (same lines: all of it on line 1). */
export function wrapModuleFast(code: string): string {
  const src = wrapModule(code);
  const head = 'globalThis.__mk = function () {';
  if (!src.startsWith(head) || !src.endsWith('};')) throw new Error('wrapModuleFast: wrapModule changed shape');
  return `globalThis.__mk = ((${FAST_GLOBALS}) => function () {${src.slice(head.length, -2)}})(${FAST_GLOBALS});`;
}

const CALL = { meta: 0, make: 1, free: 2, check: 3, reset: 4, step: 5, expert: 6, mutation: 7, clock: 8 } as const;
const STRING_AT = (imgBytes: number) => Math.ceil(batchBytes(MAX_BATCH, imgBytes) / 8) * 8;
/** Cells a slot may need: the largest view a grid env may declare. */
const MAX_IMG = MAX_VIEW_SIZE * MAX_VIEW_SIZE * 3;

interface GuestError {
  k?: number;
  name?: string;
  message?: string;
  stack?: string;
}

/**
 * The host's end of one sandbox: requests through shared memory, answered synchronously (the
 * host sleeps in Atomics.wait until the answer or the deadline; at the deadline it kills the
 * process and the module is gone).
 */
class Channel {
  /** Control words: 0 state (STATE), 1 op, 2 n, 3 arg, 4 why the sandbox process ended (ENDED), 5 its pid. */
  readonly ctl = new Int32Array(new SharedArrayBuffer(32));
  readonly data = new SharedArrayBuffer(STRING_AT(MAX_IMG) + 4 + STRING_BYTES);
  readonly v = batchViews(this.data, MAX_BATCH, MAX_IMG);
  private readonly strLen = new Int32Array(this.data, STRING_AT(MAX_IMG), 1);
  private readonly str = new Uint8Array(this.data, STRING_AT(MAX_IMG) + 4, STRING_BYTES);
  private readonly worker: Worker;
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

  constructor(prelude: string, module: string, private readonly opts: Required<CodeEnvSandboxOptions>) {
    this.worker = new Worker(WORKER, {
      eval: true,
      // The process's heap cap: QuickJS's 64 MiB, plus the process's own ~16 MiB.
      workerData: { ctl: this.ctl, data: this.data, cap: MAX_BATCH, maxImg: MAX_IMG, strAt: STRING_AT(MAX_IMG), strBytes: STRING_BYTES, sources: { prelude, module }, maxCell: MAX_CELL_VALUE, heapMb: Math.ceil(opts.memoryBytes / 1048576) + 16, child: CHILD },
      // The relay only forwards: a small heap of its own.
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 },
      stdout: true,
      stderr: true,
    });
    this.worker.unref();
    this.worker.on('error', () => this.end('its relay thread crashed', 'exception'));
    this.worker.on('exit', () => this.end('stopped', 'exception'));
    if (!this.wait(STATE.booting, opts.loadTimeoutMs + 5000) || this.ctl[4] !== ENDED.running) {
      this.close('did not start');
      throw new CodeEnvError('the code env sandbox (a process of its own) did not start in time', null, 'load');
    }
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
    if (!this.wait(STATE.request, limitMs)) throw this.stopAtDeadline(what, limitMs);
    return this.answer(what);
  }

  /**
   * The same request without blocking this thread (the server's way: other connections are served
   * while the sandbox works): `fill` writes the request's numbers into the shared views just before
   * it is sent, `read` reads its answer out of shared memory (once) as soon as it is in. Requests
   * run one at a time in order; a synchronous request arriving meanwhile first waits for this one's
   * answer and reads it out for it.
   */
  requestAsync<T>(op: number, n: number, arg: number, what: string, limitMs: number, fill: () => void, read: (answer: string | null) => T): Promise<T> {
    const run = async (): Promise<T> => {
      let out: { ok: true; v: T } | { ok: false; e: unknown } | null = null;
      const take = () => {
        try {
          out = { ok: true, v: read(this.answer(what)) };
        } catch (e) {
          out = { ok: false, e };
        }
      };
      fill();
      this.send(op, n, arg, what);
      const at = performance.now() + limitMs;
      this.inflight = { take, at, what, limitMs };
      while (out === null && this.inflight?.take === take) {
        const left = at - performance.now();
        if (left <= 0) {
          this.inflight = null;
          throw this.stopAtDeadline(what, limitMs);
        }
        const w = waitAsync(this.ctl, 0, STATE.request, left);
        if (w.async) await w.value;
        if (this.inflight?.take === take && Atomics.load(this.ctl, 0) !== STATE.request) {
          this.inflight = null;
          take();
        }
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

  /** An async request's answer, read out before a synchronous request uses the shared memory (waiting for it up to its deadline). */
  private settleInflight(): void {
    const f = this.inflight;
    if (f === null) return;
    this.inflight = null;
    if (!this.wait(STATE.request, f.at - performance.now())) {
      // That request ran away: stop the sandbox; its caller and this one both fail.
      throw this.stopAtDeadline(f.what, f.limitMs);
    }
    f.take();
  }

  private send(op: number, n: number, arg: number, what: string): void {
    const mib = Math.round(this.opts.memoryBytes / 1048576);
    const c = this.ctl;
    // The process ended between calls (the relay wrote why, and nobody answers any more).
    if (this.dead === null && c[4] !== ENDED.running) this.close(c[4] === ENDED.memory ? `ran out of memory (limit ${mib} MiB)` : 'crashed', c[4] === ENDED.memory ? 'memory' : 'exception');
    // Rule 'stopped': this call never ran (a caller may make the env again and retry it).
    if (this.dead !== null) throw new CodeEnvError(`${what}: the module's sandbox was stopped earlier (it ${this.dead}); make the env again`, null, 'stopped');
    c[1] = op;
    c[2] = n;
    c[3] = arg;
    Atomics.store(c, 0, STATE.request);
    Atomics.notify(c, 0);
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

  /** The answer in shared memory (the control word says it is in). */
  private answer(what: string): string | null {
    const mib = Math.round(this.opts.memoryBytes / 1048576);
    const len = this.strLen[0];
    if (len === -3) {
      // The sandbox process ended during this call: V8 gave up on its heap (a fatal out of memory), or it crashed.
      const memory = this.ctl[4] === ENDED.memory;
      this.close(memory ? `ran out of memory (limit ${mib} MiB)` : 'crashed', memory ? 'memory' : 'exception');
      throw new CodeEnvError(memory ? `${what} ran out of memory (limit ${mib} MiB): its sandbox process was stopped` : `${what}: the module's sandbox process crashed`, null, memory ? 'memory' : 'exception');
    }
    if (len === -2) throw new CodeEnvError(`${what} returned more than ${STRING_BYTES >> 20} MiB of JSON in one call (refused, not copied)`, null, 'contract');
    return len < 0 ? null : Buffer.from(this.str.buffer, this.str.byteOffset, len).toString('utf8');
  }

  /** Waits while the control word is `from`; false at the deadline. */
  private wait(from: number, limitMs: number): boolean {
    const end = performance.now() + limitMs;
    // Spin first: a batch answers in tens to hundreds of µs, less than waking a sleeping thread
    // costs on an idle machine (deep idle states).
    const spinEnd = performance.now() + SPIN_MS;
    while (performance.now() < spinEnd) if (Atomics.load(this.ctl, 0) !== from) return true;
    for (;;) {
      if (Atomics.load(this.ctl, 0) !== from) return true;
      const left = end - performance.now();
      if (left <= 0) return false;
      Atomics.wait(this.ctl, 0, from, left);
    }
  }

  /** The sandbox process's resident memory, bytes (Linux /proc; 0 where it cannot be read). */
  private rssBytes(): number {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.ctl[5]}/status`, 'utf8'));
      return m ? Number(m[1]) * 1024 : 0;
    } catch {
      return 0;
    }
  }

  /**
   * Stops the sandbox: kills its process (a guest in `while (true) {}` answers nothing); the relay
   * reaps it and ends. A relay that has not ended 2 s later is stopped.
   */
  close(why = 'was closed', rule = 'exception'): void {
    const first = this.dead === null || !this.closing;
    this.end(why, rule);
    if (!first) return;
    this.closing = true;
    const pid = this.ctl[5];
    if (pid > 0) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    setTimeout(() => void this.worker.terminate(), 2000).unref();
  }
}

/**
 * Frees each instance's guest object once the instance is collected. One registry for all
 * modules: a registry is not called back once it is collected itself, and one owned by its
 * WorkerLoaded went with it when an evicted module and its last instances were collected
 * together, leaving the worker thread running. The held value keeps the module until then.
 */
const INSTANCES = new FinalizationRegistry<{ loaded: WorkerLoaded; id: number }>(({ loaded, id }) => loaded.release(id));

/** One module in a worker thread of its own (its vm context inside); instances share it. */
class WorkerLoaded implements CodeEnvGuest, CodeEnvBatch {
  live = 0;
  evicted = false;
  private readonly imgBytes: number;
  /** The next instance's id (0 was made at load). */
  private nextId = 1;

  private constructor(
    readonly code: string,
    private readonly opts: Required<CodeEnvSandboxOptions>,
    private readonly ch: Channel,
    readonly meta: { observation: { view: number } },
  ) {
    this.imgBytes = meta.observation.view ** 2 * 3;
  }

  get dead(): boolean {
    return this.ch.dead !== null;
  }

  /** The module in a fresh worker, or null when it is not one this sandbox runs (then QuickJS loads it, and names any problem with its line). */
  static load(code: string, opts: Required<CodeEnvSandboxOptions>): WorkerLoaded | null {
    if (NEEDS_QUICKJS.test(code)) return null;
    let ch: Channel;
    try {
      ch = new Channel(`${HARDEN}\n${PRELUDE}\n${DRIVER}`, wrapModuleFast(code), opts);
    } catch {
      return null;
    }
    try {
      const json = ch.request(OP.load, 0, 0, 'evaluating the module', opts.loadTimeoutMs);
      const meta = json === null || json.startsWith('E') ? null : (JSON.parse(json) as { observation?: { kind?: unknown; view?: unknown } } | null);
      const obs = meta?.observation;
      if (obs?.kind !== 'grid' || typeof obs.view !== 'number' || !Number.isInteger(obs.view) || obs.view < 1 || obs.view > MAX_VIEW_SIZE) {
        ch.close('not a grid module');
        return null;
      }
      if (ch.request(OP.init, obs.view ** 2 * 3, 0, 'starting the sandbox', opts.loadTimeoutMs) !== '') throw new Error('init');
      // One instance made now (id 0), so later ones cannot fail for the module's sake (no reset or
      // step export): they are then numbered here and made on first use (instance()).
      if (ch.request(OP.call, 1, CALL.make, 'making an instance', opts.loadTimeoutMs) !== '0') throw new Error('make');
      return new WorkerLoaded(code, opts, ch, meta as { observation: { view: number } });
    } catch {
      ch.close('failed to load');
      return null;
    }
  }

  instance(): CodeEnvInstance {
    // Numbered here and made in the sandbox on its first call: no call to wait for (a served
    // session made while another's step runs is not held up by it).
    const id = this.nextId++;
    this.live++;
    const inst: CodeEnvInstance & { id: number } = {
      id,
      batch: this,
      reset: (seed) => JSON.parse(this.call(CALL.reset, id, seed, 'reset()')) as RawStep,
      step: (action) => {
        if (typeof action !== 'number') throw new TypeError('code env: the V8 sandbox runs grid envs (numeric actions)');
        return this.stepMany([inst], [action])[0];
      },
      expert: () => JSON.parse(this.call(CALL.expert, id, 0, 'expert()')) as unknown,
      resetAsync: (seed) => this.oneAsync(inst, seed, OP.reset, 'reset()'),
      stepAsync: (action) => {
        if (typeof action !== 'number') throw new TypeError('code env: the V8 sandbox runs grid envs (numeric actions)');
        return this.oneAsync(inst, action, OP.step, 'step()');
      },
      stopped: () => this.ch.dead !== null,
      setChecking: (c) => void this.call(CALL.check, id, c ? 1 : 0, 'check'),
      takeMutation: () => {
        const s = Number(this.call(CALL.mutation, id, 0, 'check'));
        return s < 0 ? null : { step: s, line: exportLine(this.code, 'step') };
      },
      takeClockLines: () => {
        const s = this.call(CALL.clock, id, 0, 'check');
        return s === '' ? [] : s.split(',').map(Number).filter((n) => n > 0);
      },
    };
    INSTANCES.register(inst, { loaded: this, id });
    return inst;
  }

  resetMany(instances: readonly CodeEnvInstance[], seeds: readonly number[]): RawStep[] {
    return this.many(instances, seeds, OP.reset, 'reset()');
  }

  stepMany(instances: readonly CodeEnvInstance[], actions: readonly number[]): RawStep[] {
    return this.many(instances, actions, OP.step, 'step()');
  }

  private many(instances: readonly CodeEnvInstance[], nums: readonly number[], op: number, what: string): RawStep[] {
    const out: RawStep[] = [];
    for (let from = 0; from < instances.length; from += MAX_BATCH) {
      const n = Math.min(MAX_BATCH, instances.length - from);
      this.fillBatch(instances, nums, from, n);
      out.push(...this.readBatch(this.answer(this.ch.request(op, n, 0, what, this.opts.callTimeoutMs), what), n, op));
    }
    return out;
  }

  /** One instance reset or stepped without blocking this thread (Channel.requestAsync). */
  private oneAsync(inst: CodeEnvInstance, num: number, op: number, what: string): Promise<RawStep> {
    return this.ch.requestAsync(op, 1, 0, what, this.opts.callTimeoutMs, () => this.fillBatch([inst], [num], 0, 1), (r) => this.readBatch(this.answer(r, what), 1, op)[0]);
  }

  private fillBatch(instances: readonly CodeEnvInstance[], nums: readonly number[], from: number, n: number): void {
    const { ids } = this.ch.v;
    for (let j = 0; j < n; j++) {
      ids[j] = (instances[from + j] as CodeEnvInstance & { id: number }).id;
      this.ch.v.nums[j] = nums[from + j];
    }
  }

  /** A batch's answer `r` (the JSON of slow slots and infos, or '') and its numbers in shared memory, as raw steps. */
  private readBatch(r: string, n: number, op: number): RawStep[] {
    const { img, dirs, rew, flags } = this.ch.v;
    const B = this.imgBytes;
    const out: RawStep[] = [];
    const slow = new Map<number, RawStep>();
    const infos = new Map<number, unknown>();
    if (r !== '') {
      const o = JSON.parse(r) as { slow: [number, RawStep][]; info: [number, unknown][] };
      for (const [j, raw] of o.slow) slow.set(j, readSlow(raw, this.code));
      for (const [j, info] of o.info) infos.set(j, info);
    }
    // One fresh copy of the batch's cells (the shared bytes are rewritten by the next call); each observation is a view of it.
    const cells = img.slice(0, n * B);
    for (let j = 0; j < n; j++) {
      const s = slow.get(j);
      if (s) out.push(s);
      else {
        const observation = { image: cells.subarray(j * B, (j + 1) * B), direction: dirs[j] };
        out.push(op === OP.reset ? { observation } : { observation, reward: rew[j], terminated: (flags[j] & 1) !== 0, truncated: (flags[j] & 2) !== 0, info: infos.get(j) });
      }
    }
    return out;
  }

  /** One driver call (CALL.*) for instance `id` with one number. */
  private call(fn: number, id: number, num: number, what: string, limitMs = this.opts.callTimeoutMs): string {
    this.ch.v.ids[0] = id;
    this.ch.v.nums[0] = num;
    return this.answer(this.ch.request(OP.call, 1, fn, what, limitMs), what);
  }

  private answer(r: string | null, what: string): string {
    if (r === null) throw new CodeEnvError(`the sandbox failed during ${what}`, null, 'exception');
    if (r.startsWith('E')) throw describe(JSON.parse(r.slice(1)) as GuestError, what);
    return r;
  }

  /** The instance `id` was collected: frees its guest object, and the worker with the last one of an evicted module. */
  release(id: number): void {
    this.live--;
    if (this.dead) return;
    try {
      this.call(CALL.free, id, 0, 'free');
    } catch {
      // Freeing a finished instance cannot fail in a way that matters: the worker goes with the module.
    }
    if (this.evicted && this.live === 0) this.ch.close('closed');
  }

  close(): void {
    this.ch.close('closed');
  }
}

/** A slow-path step (JSON) as the host's checks expect it (rewards as in the QuickJS engine). */
function readSlow(raw: RawStep & { bad?: string; rewardKind?: string }, code: string): RawStep {
  if (raw.bad !== undefined) throw new CodeEnvError(`step() returned ${raw.bad}, not { observation, reward, terminated, truncated, info }`, exportLine(code, 'step'), 'contract');
  if (raw.rewardKind !== 'number') raw.reward = raw.rewardKind === 'undefined' ? undefined : `(${raw.rewardKind})`;
  else if (typeof raw.reward === 'string') raw.reward = Number(raw.reward);
  return raw;
}

function describe(e: GuestError, what: string): CodeEnvError {
  const line = /env\.js:(\d+)/.exec(e.stack ?? '');
  const msg = e.message ?? '';
  if (e.name === 'RangeError' && /call stack size/i.test(msg)) return new CodeEnvError(`${what} overflowed the sandbox's stack: recursion too deep`, line ? Number(line[1]) : null, 'exception');
  return new CodeEnvError(`${what} threw ${e.name ?? 'an error'}: ${msg}`, line ? Number(line[1]) : null, 'exception');
}

/** The V8 engine: grid modules at V8 speed in a process each, cached by source; null for modules QuickJS must run. */
export function nodeVmEngine(options: CodeEnvSandboxOptions = {}): FastCodeEnvEngine {
  const opts = { ...DEFAULT_CODE_ENV_SANDBOX, ...options };
  const cache = new Map<string, WorkerLoaded | null>();
  return {
    load(code: string): CodeEnvGuest | null {
      const hit = cache.get(code);
      if (hit !== undefined) cache.delete(code);
      // A module whose worker was stopped (deadline, memory) is loaded again in a fresh one.
      const loaded = hit === undefined || hit?.dead ? WorkerLoaded.load(code, opts) : hit;
      cache.set(code, loaded);
      while (cache.size > MAX_LOADED) {
        const [oldest, old] = cache.entries().next().value as [string, WorkerLoaded | null];
        cache.delete(oldest);
        if (old) {
          old.evicted = true;
          if (old.live === 0) old.close();
        }
      }
      return loaded;
    },
  };
}
