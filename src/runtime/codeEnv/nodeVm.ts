/**
 * The code envs' fast sandbox in Node (CLI train/serve, the Node rollout workers, the bench): the
 * module runs at V8 speed in a `node:vm` context inside a process of its own (one per loaded
 * module; nodeGuest.ts's CHILD), reached over two FIFOs. The context holds nothing
 * of Node's (no `process`, `require`, `fetch`, timers or `console`; code generation from strings
 * off; `Promise`, `Atomics`, `SharedArrayBuffer`, `WebAssembly`, `WeakRef` and
 * `FinalizationRegistry` removed, so nothing the guest starts runs after a call returns;
 * `ArrayBuffer`, `DataView` and the typed arrays removed once the driver holds its own, since their
 * bytes are outside the heap cap); the process has a heap cap (`--max-old-space-size`, QuickJS's
 * 64 MiB plus its own), and a process because V8 ends the whole process when some allocations
 * fail (`new Array(5e7).fill(1)` is a fatal "heap out of memory", which a worker thread's
 * `resourceLimits` did not contain: it aborted `npm run train` and the server); the host enforces
 * each call's deadline itself: it polls the answer pipe up to the deadline and, past
 * it, kills the process, which stops `while (true) {}` wherever it is. Calls are synchronous (the
 * `Env` interface), as frames over the FIFOs (Channel). Grid envs
 * only, and only modules with no `async` / `import` in the source; the rest stay in QuickJS
 * (`load` returns null), as does every check (checkCodeEnv).
 *
 * Nobody touches a guest object: the process calls fixed scripts (`__vec.call(n)`,
 * `__vec.stepMany(n)`), keeps only primitive string answers, and copies numbers between the
 * guest's own ArrayBuffer (made by the driver's init, which the process takes off the context's
 * global before any user code runs, so the guest never holds it; read through the process's
 * views) and the answer frames; no host object is ever put into the context (a host object's
 * `constructor.constructor` is a Function whose code generation is on: the classic vm escape).
 *
 * Vector stepping (CodeEnvBatch): `stepMany` steps up to MAX_BATCH instances in one request, the
 * guest writing each valid step straight into the numbers (cells, heading, reward, flags); a step
 * with a non-empty info, or anything the fast path does not accept, comes back as JSON for the
 * host's usual checks. One request's deadline covers the whole batch.
 */
import { CALL_TIMEOUT_ENV, CodeEnvError, exportLine, type RawStep } from '../../core/envs/code/contract.ts';
import type { CodeEnvBatch, CodeEnvGuest, CodeEnvInstance, FastCodeEnvEngine } from '../../core/envs/code/codeEnv.ts';
import { MAX_VIEW_SIZE } from '../../core/envs/grid/world.ts';
import { DRIVER, HARDEN, OP } from './nodeGuest.ts';
import { DEFAULT_CODE_ENV_SANDBOX, PRELUDE, wrapModule, type CodeEnvSandboxOptions } from './quickjs.ts';
import { MAX_BATCH, Channel } from './nodeChannel.ts';

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

interface GuestError {
  k?: number;
  name?: string;
  message?: string;
  stack?: string;
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
      callTimeoutMs: this.opts.callTimeoutMs,
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
      out.push(...this.readBatch(this.answer(this.batchRequest(op, n, what), what), n, op));
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

  /**
   * One batch request; past the deadline, a message that says the deadline covers the batch and
   * how to raise it (a 50 ms step stops a batch of 64 at 1 s: not a loop, nor memory).
   */
  private batchRequest(op: number, n: number, what: string): string | null {
    try {
      return this.ch.request(op, n, 0, what, this.opts.callTimeoutMs);
    } catch (e) {
      if (!(e instanceof CodeEnvError) || e.rule !== 'timeout' || n < 2) throw e;
      const ms = this.opts.callTimeoutMs;
      throw new CodeEnvError(
        `${what} of a batch of ${n} envs ran past the ${ms} ms deadline of one sandbox call and was stopped: the deadline covers the whole batch, so a step slower than ${(ms / n).toFixed(1)} ms cannot train here. Make step() faster, or raise the deadline (${CALL_TIMEOUT_ENV}=${4 * ms} npm run train …); or it loops forever, or ran out of its ${Math.round(this.opts.memoryBytes / 1048576)} MiB of memory (npm run check-env -- FILE names which, and the line)`,
        null,
        'timeout',
      );
    }
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
