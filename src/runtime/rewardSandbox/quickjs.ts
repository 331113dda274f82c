/**
 * The reward lab's sandbox: user reward terms run in QuickJS compiled to WebAssembly
 * (quickjs-emscripten, the synchronous wasm variant). Why QuickJS: it is a separate JS engine
 * with its own heap and globals, so the code sees no page, storage, network, workers or Node
 * built-ins (none of `fetch`, `process`, `require`, `importScripts`, `indexedDB`, `postMessage`
 * exist in it), an interrupt handler stops an infinite loop at a deadline, and a memory limit
 * stops a runaway allocation. `node:vm` shares the host's engine and is no sandbox; a bare Web
 * Worker would still have fetch and IndexedDB. The same module runs in Node (CLI, tests) and in
 * a Web Worker (the browser), where terminating the worker is the backstop.
 *
 * Inside the sandbox, `eval` is removed and the Function constructors throw (code from strings
 * is what a term would use to hide what it does; it could not escape the sandbox either way).
 *
 * Each sandbox has a WebAssembly instance of its own, with a memory that cannot grow past the
 * heap limit: QuickJS's own limit counts allocations, not bytes, in this build (no
 * malloc_usable_size), so `new Array(1e6).fill(1)` in a loop used to grow the heap to 2 GiB over
 * tens of seconds before it failed; now malloc fails at the cap. QuickJS's stack limit is set well
 * below what the host's stack takes for the same depth (a C frame in wasm also takes room on the
 * host's native stack, up to ~12× as much in JSON.stringify), so deep recursion is QuickJS's own
 * catchable "stack overflow", not a host RangeError that leaves the runtime unusable. Should the
 * host fail anyway (its stack, an abort), the instance is dropped, never touched again.
 *
 * Every term receives frozen records (writing a field throws a TypeError), and `episode.steps` is
 * the term's own list of the steps before this one: no term can change what another one reads.
 *
 * The per-call limit is judged over a term's calls, not on one call: the term is stopped once most
 * of its calls in a batch (at least 3) each took longer than the limit, and the message gives its
 * mean time per call. Wall time is all a browser worker can measure (no thread CPU clock), and
 * under load the OS deschedules the thread now and then: at load 12 on 2 cores a 5 ms call was
 * once measured past 100 ms. QuickJS's interrupt count is no substitute: its rate per CPU-ms
 * varies ~30× with the kind of code (3.5 for function calls, 0.45 for allocation, 0.1 for
 * JSON.stringify, 0 inside Array.fill). A single call is interrupted only at the backstop,
 * max(1 s, 10 × limit): an endless loop.
 *
 * Cost: the records cross into the sandbox as JSON (columns), a few MiB at a time; the results
 * come back as JSON. The guest renews the host's deadline at most every quarter of the call
 * limit, and returns to the host every `sliceMs`, so the host's event loop (Ctrl-C, a stop
 * request) gets a turn during a long batch and `interrupt()` stops it there.
 */
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { exportLine, RewardTermError, ScoringInterrupted, termNameProblem, type RawTermScores, type RewardTermsScorer } from '../../core/reward/rewardTerms.ts';
import type { ScoreEpisode } from '../../core/reward/stepRecord.ts';
import { columns, DRIVER, HARDEN } from './guest.ts';

export interface SandboxOptions {
  /**
   * Most wall time a term's call may take, ms, judged over its calls: the term is stopped once
   * most of its calls in a batch (at least 3) each took longer. One call is interrupted only past
   * `backstopMs` (an endless loop). Default 100.
   */
  callTimeoutMs?: number;
  /** Most wall time evaluating the module's top level may take, ms. Default 1000. */
  loadTimeoutMs?: number;
  /** Heap limit of the sandbox, bytes. Default 64 MiB (a batch of step records is a few MiB). */
  memoryBytes?: number;
  /**
   * QuickJS's stack limit, bytes: deep recursion is QuickJS's "stack overflow" error, naming the
   * term, not a host crash. Default 32 KiB (about 160 nested calls of a small function): in the
   * worst case measured (JSON.stringify of a deeply nested array) that depth takes ~400 KiB of
   * the host's native stack, which is under 1 MiB in Node and browsers.
   */
  stackBytes?: number;
  /** Longest the guest scores before it hands control back to the host for a moment, ms. Default 200. */
  sliceMs?: number;
}

export const DEFAULT_SANDBOX: Required<SandboxOptions> = { callTimeoutMs: 100, loadTimeoutMs: 1000, memoryBytes: 64 * 1024 * 1024, stackBytes: 32 * 1024, sliceMs: 200 };

/** Memory of a fresh QuickJS instance before the heap grows (the build's initial memory: code, data, C stack). */
const BASE_MEMORY_BYTES = 16 * 1024 * 1024;
const WASM_PAGE = 64 * 1024;
/** Most characters of records JSON sent into the sandbox at once (a batch goes in chunks of whole episodes). */
const CHUNK_CHARS = 4 * 1024 * 1024;

/** File name the user's module is evaluated under (it appears in stack traces as `reward.js:LINE`). */
const FILE = 'reward.js';

/**
 * A QuickJS instance of its own (~10 ms), whose memory cannot grow past the initial memory plus
 * `heapBytes`: an allocation past it fails, which QuickJS reports as "out of memory". One
 * instance per sandbox also keeps a sandbox that failed badly (an abort) from breaking the others.
 */
function quickjs(heapBytes: number): Promise<QuickJSWASMModule> {
  const maximum = Math.ceil((BASE_MEMORY_BYTES + heapBytes) / WASM_PAGE);
  const wasmMemory = new WebAssembly.Memory({ initial: BASE_MEMORY_BYTES / WASM_PAGE, maximum });
  return newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmMemory }));
}

/** A macrotask: lets the host's event loop run (signals, messages) between slices of scoring. */
const yieldToHost = () => new Promise<void>((resolve) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)));

interface GuestError {
  name?: string;
  message?: string;
  stack?: string;
  /** 'SlowTerm' only: the term's mean wall time per call in this batch so far, ms. */
  perCallMs?: number;
  /** 'SlowTerm' only: its calls so far, and how many of them were over the limit. */
  calls?: number;
  over?: number;
}

/**
 * The longest one call may run before the host interrupts it, ms: a backstop for an endless
 * loop, well above the per-call limit, so a call that the OS descheduled for a while under load
 * is not taken for a loop (the limit itself is judged over the term's calls).
 */
export function backstopMs(callTimeoutMs: number): number {
  return Math.max(1000, 10 * callTimeoutMs);
}

/** The line in reward.js where the error was raised (from QuickJS's stack: "at fn (reward.js:3)"). */
function errorLine(err: GuestError): number | null {
  const m = /reward\.js:(\d+)/.exec(err.stack ?? '');
  return m ? Number(m[1]) : null;
}

/** Groups the episodes' column JSON into chunks of at most CHUNK_CHARS (an episode larger than that goes alone). */
function chunks(episodes: readonly ScoreEpisode[]): { json: string; first: number; count: number }[] {
  const out: { json: string; first: number; count: number }[] = [];
  let parts: string[] = [];
  let size = 0;
  let first = 0;
  episodes.forEach((ep, i) => {
    const text = JSON.stringify(columns(ep));
    if (parts.length > 0 && size + text.length > CHUNK_CHARS) {
      out.push({ json: `[${parts.join(',')}]`, first, count: parts.length });
      parts = [];
      size = 0;
      first = i;
    }
    parts.push(text);
    size += text.length + 1;
  });
  if (parts.length > 0) out.push({ json: `[${parts.join(',')}]`, first, count: parts.length });
  return out;
}

/** The host failed while the guest ran (not a guest exception): its stack, or a wasm abort. */
function hostFailure(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

class QuickJsRewardScorer implements RewardTermsScorer {
  private closed = false;
  private broken: RewardTermError | null = null;
  /** The host failed inside the instance: never call into it again (not even to dispose it). */
  private dead = false;
  private interrupted = false;
  /** score() calls run one after another (a batch is scored in slices, with the event loop between). */
  private queue: Promise<unknown> = Promise.resolve();
  private scoring = 0;

  constructor(
    readonly terms: readonly string[],
    private readonly code: string,
    private readonly rt: QuickJSRuntime,
    private readonly vm: QuickJSContext,
    private readonly ns: QuickJSHandle,
    private readonly driver: QuickJSHandle,
    private readonly opts: Required<SandboxOptions>,
    private readonly deadline: { at: number },
  ) {}

  lineOf(term: string): number | null {
    return exportLine(this.code, term);
  }

  interrupt(): void {
    this.interrupted = true;
  }

  score(episodes: readonly ScoreEpisode[]): Promise<RawTermScores[]> {
    const next = this.queue.then(() => this.scoreNow(episodes));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async scoreNow(episodes: readonly ScoreEpisode[]): Promise<RawTermScores[]> {
    if (this.closed) throw new Error('reward sandbox: score() after close()');
    if (this.interrupted) throw new ScoringInterrupted();
    if (this.broken) throw this.broken;
    if (episodes.length === 0 || this.terms.length === 0) return episodes.map((ep) => ({ values: Object.fromEntries(this.terms.map((n) => [n, new Float64Array(ep.steps.length)])), bad: [] }));
    this.scoring++;
    try {
      const out: RawTermScores[] = [];
      for (const chunk of chunks(episodes)) out.push(...(await this.scoreChunk(chunk.json, episodes.slice(chunk.first, chunk.first + chunk.count))));
      return out;
    } finally {
      this.scoring--;
      if (this.closed) this.dispose();
    }
  }

  /** One chunk: start the guest's job, then run slices until it is done, yielding to the host between them. */
  private async scoreChunk(json: string, episodes: readonly ScoreEpisode[]): Promise<RawTermScores[]> {
    const { vm } = this;
    // One call may run between the backstop and the backstop + slack before it is interrupted.
    const slack = Math.max(1, Math.round(this.opts.callTimeoutMs / 4));
    const limit = backstopMs(this.opts.callTimeoutMs) + slack;
    const handles: QuickJSHandle[] = [];
    const keep = <H extends QuickJSHandle>(h: H): H => (handles.push(h), h);
    try {
      const startFn = keep(vm.getProp(this.driver, 'start'));
      const runFn = keep(vm.getProp(this.driver, 'run'));
      const names = keep(vm.newArray());
      this.terms.forEach((n, i) => vm.setProp(names, i, vm.newString(n)));
      const enter = keep(
        vm.newFunction('enter', () => {
          this.deadline.at = performance.now() + limit;
        }),
      );
      const slackH = keep(vm.newNumber(slack));
      const sliceH = keep(vm.newNumber(this.opts.sliceMs));
      const limitH = keep(vm.newNumber(this.opts.callTimeoutMs));
      const jsonH = keep(vm.newString(json));
      const started = vm.callFunction(startFn, vm.undefined, this.ns, names, jsonH);
      if (started.error) {
        const err = vm.dump(started.error) as GuestError;
        started.error.dispose();
        throw (this.broken = this.describeFailure(err, episodes));
      }
      started.value.dispose();
      jsonH.dispose();
      for (;;) {
        const r = vm.callFunction(runFn, vm.undefined, enter, slackH, sliceH, limitH);
        this.deadline.at = Infinity;
        if (r.error) {
          const err = vm.dump(r.error) as GuestError;
          r.error.dispose();
          throw (this.broken = this.describeFailure(err, episodes));
        }
        const text = vm.typeof(r.value) === 'string' ? vm.getString(r.value) : null;
        r.value.dispose();
        if (text !== null) {
          const out = JSON.parse(text) as { values: (number | null)[][]; bad: RawTermScores['bad'] }[];
          return out.map((o) => ({
            values: Object.fromEntries(this.terms.map((n, k) => [n, Float64Array.from(o.values[k], (v) => (v === null ? NaN : v))])),
            bad: o.bad,
          }));
        }
        await yieldToHost();
        // close() meanwhile (a new reward version swapped in) lets this batch finish: it frees the instance after.
        if (this.interrupted) throw new ScoringInterrupted();
      }
    } catch (e) {
      if (e instanceof RewardTermError || e instanceof ScoringInterrupted) throw e;
      // Not a guest exception: the host's own stack overflowed inside the instance, or the wasm
      // aborted. Its state is unknown, so it is never called again.
      this.dead = true;
      throw (this.broken = this.hostFailed(e, episodes));
    } finally {
      this.deadline.at = Infinity;
      if (!this.dead) for (const h of handles) if (h.alive) h.dispose();
    }
  }

  /** A message for a host failure inside the instance (the guest's `cur` cannot be read any more). */
  private hostFailed(e: unknown, episodes: readonly ScoreEpisode[]): RewardTermError {
    const only = this.terms.length === 1 ? this.terms[0] : null;
    const at = only ? `reward term '${only}'${this.lineOf(only) ? ` (line ${this.lineOf(only)})` : ''}` : `one of the reward terms (${this.terms.join(', ')})`;
    const seed = episodes.length === 1 ? episodes[0].seed : null;
    const where = seed === null ? ` in a batch of ${episodes.length} episodes (seeds ${episodes[0].seed}…)` : ` in the episode with seed ${seed}`;
    const msg = hostFailure(e);
    if (e instanceof RangeError && /call stack/i.test(msg)) {
      return new RewardTermError('stack', `${at} recursed so deeply that the host's stack overflowed${where} (${msg}); the sandbox was dropped`, only, seed);
    }
    if (/out of memory|OOM/i.test(msg)) return new RewardTermError('memory', `${at} ran out of memory (limit ${Math.round(this.opts.memoryBytes / 1048576)} MiB)${where}; the sandbox was dropped`, only, seed);
    return new RewardTermError('exception', `the reward sandbox failed while ${at} ran${where} (${msg}); it was dropped`, only, seed);
  }

  /** Turns a guest failure into a message naming the term, the line and the episode's seed. */
  private describeFailure(thrown: GuestError | null, episodes: readonly ScoreEpisode[]): RewardTermError {
    // QuickJS throws null when it cannot even allocate the "out of memory" error.
    const err: GuestError = thrown !== null && typeof thrown === 'object' ? thrown : { name: 'InternalError', message: thrown === null || thrown === undefined ? 'out of memory' : String(thrown) };
    const whereH = this.vm.getProp(this.driver, 'where');
    const w = this.vm.callFunction(whereH, this.vm.undefined);
    whereH.dispose();
    let k = -1, e = -1, t = -1;
    if (!w.error) {
      [k, e, t] = this.vm.getString(w.value).split(',').map(Number);
      w.value.dispose();
    } else w.error.dispose();
    const term = k >= 0 ? this.terms[k] : null;
    const seed = e >= 0 && e < episodes.length ? episodes[e].seed : null;
    const at = term === null ? 'the reward module' : `reward term '${term}'`;
    const where = seed === null ? '' : ` at step ${t} of the episode with seed ${seed}`;
    const msg = err.message ?? String(err);
    if (err.name === 'SlowTerm') {
      const line = term === null ? null : this.lineOf(term);
      const per = (err.perCallMs ?? NaN).toFixed((err.perCallMs ?? 0) < 10 ? 1 : 0);
      return new RewardTermError('timeout', `${at}${line ? ` (line ${line})` : ''} takes ${per} ms per call on average, over its ${this.opts.callTimeoutMs} ms limit per call (${err.over} of its ${err.calls} calls so far were over${where ? `; the last${where}` : ''}): make it cheaper, or raise the limit`, term, seed);
    }
    if (msg === 'interrupted') {
      const line = term === null ? null : this.lineOf(term);
      return new RewardTermError('timeout', `${at}${line ? ` (line ${line})` : ''} ran past its ${this.opts.callTimeoutMs} ms limit per call${where} and was stopped after ${backstopMs(this.opts.callTimeoutMs)} ms in that one call (an infinite loop?)`, term, seed);
    }
    if (/out of memory/i.test(msg)) {
      return new RewardTermError('memory', `${at} ran out of memory (limit ${Math.round(this.opts.memoryBytes / 1048576)} MiB)${where}`, term, seed);
    }
    const line = errorLine(err) ?? (term === null ? null : this.lineOf(term));
    if (err.name === 'InternalError' && /stack overflow/i.test(msg)) {
      return new RewardTermError('stack', `${at} overflowed the sandbox's stack${line ? ` (line ${line})` : ''}${where}: recursion too deep (the limit is ${Math.round(this.opts.stackBytes / 1024)} KiB, about ${Math.round(this.opts.stackBytes / 200)} nested calls)`, term, seed);
    }
    return new RewardTermError('exception', `${at} threw ${err.name ?? 'an error'}: ${msg}${line ? ` (line ${line})` : ''}${where}`, term, seed);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // A score() in progress (between slices) finishes its batch and frees the instance when it settles.
    if (this.scoring === 0) this.dispose();
  }

  private dispose(): void {
    if (this.dead) return;
    this.dead = true;
    try {
      for (const h of [this.ns, this.driver]) if (h.alive) h.dispose();
      this.vm.dispose();
      this.rt.dispose();
    } catch {
      // QuickJS asserts that every object was freed; after some guest errors (a stack overflow
      // inside Array.prototype.sort) one leaks and the assertion aborts the instance. It is this
      // sandbox's own instance, so dropping it is enough.
    }
  }
}

/**
 * Evaluates `code` (an ES module) in a fresh QuickJS context and returns a scorer over its named
 * exports. Rejects with a `RewardTermError` ('load') when the module does not parse, throws or
 * loops at its top level, imports anything, exports a non-function, exports nothing, or names a
 * term like a built-in shaping term.
 */
export async function createRewardSandbox(code: string, options: SandboxOptions = {}): Promise<RewardTermsScorer> {
  const opts = { ...DEFAULT_SANDBOX, ...options };
  const mod = await quickjs(opts.memoryBytes);
  const rt = mod.newRuntime();
  rt.setMemoryLimit(opts.memoryBytes);
  rt.setMaxStackSize(opts.stackBytes);
  const deadline = { at: Infinity };
  rt.setInterruptHandler(() => performance.now() > deadline.at);
  // No module loader: `import` of anything fails with QuickJS's own message.
  const vm = rt.newContext();
  const fail = (msg: string): never => {
    try {
      vm.dispose();
      rt.dispose();
    } catch {
      // The instance is this sandbox's own: an abort while freeing it (a leak QuickJS asserts on) is dropped with it.
    }
    throw new RewardTermError('load', msg);
  };
  const run = (src: string, name: string, type: 'global' | 'module') => {
    deadline.at = performance.now() + opts.loadTimeoutMs;
    try {
      return vm.evalCode(src, name, { type });
    } catch (e) {
      // The host failed inside the instance (its stack, an abort): drop the instance untouched.
      throw new RewardTermError('load', `reward module: the sandbox failed while loading it (${hostFailure(e)})`);
    } finally {
      deadline.at = Infinity;
    }
  };
  const l: Loading = { vm, opts, fail, run };
  const driver = loadDriver(l);
  const ns = loadModule(l, code, driver);
  const terms = readTerms(l, code, ns, driver);
  return new QuickJsRewardScorer(terms, code, rt, vm, ns, driver, opts, deadline);
}

/** A sandbox being loaded: its context, options, how a load fails (freeing the instance), and an eval under the load deadline. */
interface Loading {
  vm: QuickJSContext;
  opts: Required<SandboxOptions>;
  fail: (msg: string) => never;
  run: (src: string, name: string, type: 'global' | 'module') => ReturnType<QuickJSContext['evalCode']>;
}

/** The driver (the host's calls into the sandbox), then the hardening of the sandbox's globals. */
function loadDriver({ vm, fail, run }: Loading): QuickJSHandle {
  const driverR = run(DRIVER, 'driver.js', 'global');
  if (driverR.error) {
    const e = vm.dump(driverR.error) as GuestError;
    driverR.error.dispose();
    fail(`reward sandbox: the driver failed (${e.message})`);
  }
  const driver = (driverR as { value: QuickJSHandle }).value;
  const hardenR = run(HARDEN, 'harden.js', 'global');
  if (hardenR.error) {
    hardenR.error.dispose();
    driver.dispose();
    fail('reward sandbox: hardening failed');
  }
  (hardenR as { value: QuickJSHandle }).value.dispose();
  return driver;
}

/** The person's module evaluated: its namespace, or a load error naming why (loop, stack, memory, a throw) and the line. */
function loadModule({ vm, opts, fail, run }: Loading, code: string, driver: QuickJSHandle): QuickJSHandle {
  const r = run(code, FILE, 'module');
  if (r.error) {
    const thrown = vm.dump(r.error) as GuestError | null;
    r.error.dispose();
    driver.dispose();
    const e: GuestError = thrown !== null && typeof thrown === 'object' ? thrown : { name: 'InternalError', message: thrown == null ? 'out of memory' : String(thrown) };
    const line = errorLine(e);
    const msg =
      e.message === 'interrupted'
        ? `ran past its ${opts.loadTimeoutMs} ms limit while loading and was stopped (an infinite loop at the top level?)`
        : e.name === 'InternalError' && /stack overflow/i.test(e.message ?? '')
          ? `overflowed the sandbox's stack while loading: recursion too deep (the limit is ${Math.round(opts.stackBytes / 1024)} KiB)`
          : /out of memory/i.test(e.message ?? '')
            ? `ran out of memory while loading (limit ${Math.round(opts.memoryBytes / 1048576)} MiB)`
            : `${e.name ?? 'Error'}: ${e.message}`;
    fail(`reward module: ${msg}${line ? ` (line ${line})` : ''}`);
  }
  // A module with top-level await gives a promise; the sync variant has no event loop to settle it.
  const nsR = r as { value: QuickJSHandle };
  const state = vm.getPromiseState(nsR.value);
  if (state.type !== 'fulfilled') {
    nsR.value.dispose();
    driver.dispose();
    fail('reward module: top-level await is not supported (a term is a plain synchronous function)');
  }
  const ns = (state as { value: QuickJSHandle }).value;
  if (ns !== nsR.value) nsR.value.dispose();
  return ns;
}

/** The module's term names in source order; a load error listing every export that is not a term. */
function readTerms({ vm, fail }: Loading, code: string, ns: QuickJSHandle, driver: QuickJSHandle): string[] {
  // Export names and kinds, read inside the sandbox (the namespace is an exotic object).
  const keysFn = vm.getProp(driver, 'exportsOf');
  const kr = vm.callFunction(keysFn, vm.undefined, ns);
  keysFn.dispose();
  if (kr.error) {
    kr.error.dispose();
    ns.dispose();
    driver.dispose();
    fail('reward module: its exports could not be read');
  }
  const exportsList = JSON.parse(vm.getString((kr as { value: QuickJSHandle }).value)) as [string, string][];
  (kr as { value: QuickJSHandle }).value.dispose();
  const problems: string[] = [];
  for (const [name, kind] of exportsList) {
    const line = exportLine(code, name);
    const at = line ? ` (line ${line})` : '';
    if (name === 'default') problems.push(`the default export${at} is not a term: export each term under its name (export const name = (step) => …)`);
    else if (termNameProblem(name, at)) problems.push(termNameProblem(name, at)!);
    else if (kind !== 'function') problems.push(`export '${name}'${at} is a ${kind}, not a function (step) => number`);
  }
  if (exportsList.length === 0) problems.push('the module exports no terms: export at least one function, e.g. export const stepCost = (step) => -0.01');
  if (problems.length > 0) {
    ns.dispose();
    driver.dispose();
    fail(`reward module: ${problems.join('; ')}`);
  }
  // Export order in QuickJS's namespace is alphabetical; report terms in source order instead.
  return exportsList.map(([n]) => n).sort((a, b) => (exportLine(code, a) ?? 0) - (exportLine(code, b) ?? 0));
}
