/**
 * The code envs' sandbox: QuickJS compiled to WebAssembly (the synchronous variant, as in the
 * reward lab), so the user's module has no page, storage, network, workers or Node built-ins
 * (`fetch`, `indexedDB`, `localStorage`, `importScripts`, `postMessage`, `process`, `require`
 * are simply not defined), an interrupt handler stops a call at its deadline, and a memory
 * limit stops runaway allocation. Synchronous, so an env steps inside the rollout loop like a
 * built-in one, in Node (CLI, tests) and in a Web Worker alike. It runs every check
 * (checkCodeEnv), everything in the browser, and in Node the modules the V8 sandbox leaves to it
 * (nodeVm.ts: grid modules run there; ARCHITECTURE.md, 'Code envs').
 *
 * The module is evaluated as a script: its `export` keywords are stripped and its body wrapped
 * in a factory on the same first line, so the factory makes independent instances (one per env)
 * and stack traces keep the user's line numbers (`env.js:LINE`). Before it runs, a prelude
 * captures JSON, removes `eval`, makes the Function constructors throw and wraps Math.random,
 * Date.now and `new Date()` to note the lines that read them (checkCodeEnv names them when the
 * same seed gave two episodes).
 */
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { CodeEnvError, type RawStep } from '../../core/envs/code/contract.ts';
import { instrumentLoops, topLevelBindings } from '../../core/envs/code/source.ts';
import type { CodeEnvEngine, CodeEnvGuest, CodeEnvInstance } from '../../core/envs/code/codeEnv.ts';

export interface CodeEnvSandboxOptions {
  /** Most wall time one reset/step call may take before it is interrupted, ms. Default 1000. */
  callTimeoutMs?: number;
  /** Most wall time evaluating the module (and making an instance) may take, ms. Default 2000. */
  loadTimeoutMs?: number;
  /** QuickJS heap limit per loaded module, bytes. Default 64 MiB. */
  memoryBytes?: number;
  /** QuickJS stack limit, bytes (deep recursion is a catchable "stack overflow"). Default 64 KiB. */
  stackBytes?: number;
}

export const DEFAULT_CODE_ENV_SANDBOX: Required<CodeEnvSandboxOptions> = { callTimeoutMs: 1000, loadTimeoutMs: 2000, memoryBytes: 64 * 1024 * 1024, stackBytes: 64 * 1024 };

/** The file name the module runs under: stack traces read `env.js:LINE`. */
const FILE = 'env.js';
/** WebAssembly memory all modules of this thread share, bytes: a hard cap beside QuickJS's own count. */
const WASM_MEMORY_BYTES = 512 * 1024 * 1024;
/** Loaded modules kept per thread (a studio session saves many versions; the oldest unused go). */
const MAX_LOADED = 8;

export const PRELUDE = `
globalThis.__drv = (() => {
  const stringify = JSON.stringify, isFinite = Number.isFinite, ErrorC = Error;
  const lineOf = () => { const m = /env\\.js:(\\d+)/.exec(new ErrorC().stack || ''); return m ? +m[1] : 0; };
  const clock = [];
  const note = () => { const l = lineOf(); if (clock.length < 16 && clock.indexOf(l) < 0) clock.push(l); };
  const rnd = Math.random;
  Math.random = function random() { note(); return rnd(); };
  const D = Date, dnow = Date.now;
  const Dw = function Date(...a) { if (a.length === 0) note(); return new.target ? new D(...a) : D(); };
  Dw.prototype = D.prototype; Dw.UTC = D.UTC; Dw.parse = D.parse;
  Dw.now = function now() { note(); return dnow(); };
  globalThis.Date = Dw;
  const refuse = function () { throw new EvalError('code generation from strings is disabled in code envs'); };
  for (const f of [function () {}, function* () {}, async function () {}, async function* () {}]) {
    Object.defineProperty(Object.getPrototypeOf(f), 'constructor', { value: refuse, writable: false, configurable: false });
  }
  Object.defineProperty(globalThis, 'Function', { value: refuse, writable: false, configurable: false });
  delete globalThis.eval;
  const insts = [];
  const fin = (x) => typeof x === 'number' && !isFinite(x) ? String(x) : x;
  const kind = (x) => x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x;
  // Check mode (checkCodeEnv, QuickJS): observations frozen as they are handed out, so a later write throws at its line.
  const freeze = Object.freeze, isFrozen = Object.isFrozen, keys = Object.keys, isArray = Array.isArray, MapC = Map, SetC = Set;
  const deepFreeze = (o, d) => { if (o === null || typeof o !== 'object' || isFrozen(o) || d > 8) return; freeze(o); for (const k of keys(o)) deepFreeze(o[k], d + 1); };
  // Check mode: how much a value holds (values reachable from it; a string counts 1 per 8 characters), up to 4 million.
  const sizeOf = (v) => {
    const seen = new SetC(), stack = [v];
    let n = 0;
    while (stack.length > 0 && n < 4e6) {
      const x = stack.pop();
      if (x === null || (typeof x !== 'object' && typeof x !== 'function')) { n += typeof x === 'string' ? 1 + (x.length >> 3) : 1; continue; }
      if (seen.has(x)) continue;
      seen.add(x);
      n++;
      if (typeof x === 'function') continue;
      if (x instanceof MapC || x instanceof SetC) { x.forEach((a, b) => { stack.push(a); stack.push(b); }); continue; }
      if (isArray(x)) { for (let i = 0; i < x.length; i++) stack.push(x[i]); continue; }
      for (const k of keys(x)) stack.push(x[k]);
    }
    return n;
  };
  const zero = (s) => { const c = s.counts; for (let i = 0; i < c.length; i++) c[i] = 0; };
  const make = (id) => {
    const counts = [];
    const m = globalThis.__mk(counts);
    if (typeof m.reset !== 'function') throw new TypeError('the module exports no function reset(seed)');
    if (typeof m.step !== 'function') throw new TypeError('the module exports no function step(action)');
    const i = typeof id === 'number' ? id : insts.length;
    insts[i] = { m, checking: false, prev: null, snap: null, steps: 0, mutated: null, counts, freeze: false };
    return i;
  };
  // An id the host numbered itself (the V8 sandbox: making an instance needs no call) is made on first use.
  const at = (id) => insts[id] || (make(id), insts[id]);
  return {
    meta: () => { const m = globalThis.__mk([]); return stringify(m.env === undefined ? null : m.env); },
    make,
    free: (id) => { insts[id] = null; },
    inst: at,
    check: (id, on) => { at(id).checking = on; },
    reset: (id, seed) => {
      const s = at(id);
      zero(s);
      const o = s.m.reset(seed);
      s.steps = 0;
      const out = stringify({ observation: o === undefined ? null : o });
      if (s.checking) { s.prev = o; s.snap = out; }
      if (s.freeze) deepFreeze(o, 0);
      return out;
    },
    step: (id, action) => {
      const s = at(id);
      zero(s);
      const r = s.m.step(action);
      s.steps++;
      if (s.checking && s.prev !== null && typeof s.prev === 'object' && s.mutated === null && stringify({ observation: s.prev }) !== s.snap) s.mutated = s.steps;
      if (r === null || typeof r !== 'object') return stringify({ bad: kind(r) });
      const out = stringify({ observation: r.observation === undefined ? null : r.observation, reward: fin(r.reward), rewardKind: kind(r.reward), terminated: r.terminated, truncated: r.truncated, info: r.info });
      if (s.checking) { s.prev = r.observation; s.snap = stringify({ observation: r.observation === undefined ? null : r.observation }); }
      if (s.freeze) deepFreeze(r.observation, 0);
      return out;
    },
    expert: (id) => { const s = at(id), m = s.m; zero(s); if (typeof m.expert !== 'function') return 'null'; const a = m.expert(); return stringify(a === undefined ? null : a); },
    mutation: (id) => { const s = at(id), m = s.mutated; s.mutated = null; return m === null ? -1 : m; },
    clock: () => { const out = clock.join(','); clock.length = 0; return out; },
    loops: (id) => stringify(at(id).counts),
    freeze: (id, on) => { at(id).freeze = on; },
    sizes: (id) => { const m = at(id).m, out = {}; if (typeof m.__vars !== 'function') return '{}'; const v = m.__vars(); for (const k of keys(v)) out[k] = sizeOf(v[k]); return stringify(out); },
  };
})();
`;

/** The module as a factory script, same line numbers: `export` stripped, the body wrapped on line 1. */
export function wrapModule(code: string): string {
  const lines = code.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*import\b[\s{*'"]/.test(lines[i])) throw new CodeEnvError('a code env cannot import anything: write the module in one file', i + 1, 'load');
    if (/^\s*export\s+default\b/.test(lines[i])) throw new CodeEnvError('no default export: export env, reset and step by name', i + 1, 'load');
    if (/^\s*export\s*\{/.test(lines[i])) throw new CodeEnvError('export each binding where it is declared (export function step …), not in an export list', i + 1, 'load');
  }
  const body = code.replace(/^(\s*)export\s+(?=(?:async\s+)?(?:function|const|let|var|class)\b)/gm, '$1');
  const pick = (n: string) => `${n}: typeof ${n} === 'undefined' ? undefined : ${n}`;
  return `globalThis.__mk = function () { 'use strict'; ${body}\n;return { ${pick('env')}, ${pick('reset')}, ${pick('step')}, ${pick('expert')} }; };`;
}

/**
 * wrapModule for the checking sandbox: the same factory, plus a counter on every loop (source.ts:
 * `__lc[i]` counts loop i's iterations in its current run, so a call stopped at its deadline names
 * the loop that ran away, and a slow step the loop it spent its time in) and `__vars()`, the
 * module's top-level bindings (the check sizes them to find the one that grows across resets).
 * Same lines as the source. `loops[i]` is loop i's line.
 */
export function wrapModuleChecking(code: string): { script: string; loops: number[] } {
  wrapModule(code); // its refusals (import, default export, export lists) first, with their lines
  const { code: counted, lines } = instrumentLoops(code, '__lc');
  const body = counted.replace(/^(\s*)export\s+(?=(?:async\s+)?(?:function|const|let|var|class)\b)/gm, '$1');
  const names = [...new Set(topLevelBindings(code).map((b) => b.name))];
  const pick = (n: string) => `${n}: typeof ${n} === 'undefined' ? undefined : ${n}`;
  const vars = names.map((n) => `${JSON.stringify(n)}: (() => { try { return ${n}; } catch (e) { return undefined; } })()`).join(', ');
  return {
    script: `globalThis.__mk = function (__lc) { 'use strict'; for (let __i = 0; __i < ${lines.length}; __i++) __lc[__i] = 0; ${body}\n;return { ${pick('env')}, ${pick('reset')}, ${pick('step')}, ${pick('expert')}, __vars: () => ({ ${vars} }) }; };`,
    loops: lines,
  };
}

interface GuestError {
  name?: string;
  message?: string;
  stack?: string;
}

const lineOfStack = (stack: string | undefined): number | null => {
  const m = /env\.js:(\d+)/.exec(stack ?? '');
  return m ? Number(m[1]) : null;
};

let modulePromise: Promise<QuickJSWASMModule> | null = null;
let wasm: QuickJSWASMModule | null = null;
/** This thread's QuickJS WebAssembly memory (all modules' heaps). */
let wasmMemory: WebAssembly.Memory | null = null;

/** Loads the WebAssembly once per thread. */
export function loadQuickJs(): Promise<QuickJSWASMModule> {
  wasmMemory ??= new WebAssembly.Memory({ initial: 256, maximum: WASM_MEMORY_BYTES / 65536 });
  modulePromise ??= newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmMemory })).then((m) => (wasm = m));
  return modulePromise;
}

/** Bytes of WebAssembly memory QuickJS holds in this thread (it grows, never shrinks), 0 before loadQuickJs. */
export function quickJsMemoryBytes(): number {
  return wasmMemory?.buffer.byteLength ?? 0;
}

/** One module loaded into a QuickJS runtime of its own; instances share it. */
class Loaded implements CodeEnvGuest {
  meta: unknown;
  live = 0;
  evicted = false;
  private readonly fns: Record<'meta' | 'make' | 'free' | 'check' | 'reset' | 'step' | 'expert' | 'mutation' | 'clock' | 'loops' | 'freeze' | 'sizes', QuickJSHandle>;
  /** Checking: the line of each counted loop (wrapModuleChecking); empty otherwise. */
  private loopLines: number[] = [];
  private readonly deadline = { at: Infinity };
  private disposed = false;
  /** WebAssembly memory bytes at the last memory check, and interrupts since (overMemory). */
  private memSeen = 0;
  private memTicks = 0;
  /** Bytes the module held when a call was stopped for memory (0: none was). */
  private heldBytes = 0;
  private readonly registry = new FinalizationRegistry<number>((id) => this.release(id));

  constructor(
    readonly code: string,
    private readonly rt: QuickJSRuntime,
    private readonly vm: QuickJSContext,
    private readonly opts: Required<CodeEnvSandboxOptions>,
    readonly checking = false,
  ) {
    rt.setInterruptHandler(() => performance.now() > this.deadline.at || this.overMemory());
    this.evalScript(PRELUDE, 'prelude.js');
    const counted = checking ? wrapModuleChecking(code) : null;
    if (counted === null) this.evalScript(wrapModule(code), FILE);
    else {
      try {
        this.evalScript(counted.script, FILE);
        this.loopLines = counted.loops;
      } catch {
        // The counted module did not compile (a shape source.ts misreads, or the module's own
        // syntax error): the plain module, uncounted; its own errors stand, with their lines.
        this.evalScript(wrapModule(code), FILE);
      }
    }
    const drv = vm.getProp(vm.global, '__drv');
    const names = ['meta', 'make', 'free', 'check', 'reset', 'step', 'expert', 'mutation', 'clock', 'loops', 'freeze', 'sizes'] as const;
    this.fns = Object.fromEntries(names.map((n) => [n, vm.getProp(drv, n)])) as Loaded['fns'];
    drv.dispose();
    try {
      const metaJson = this.call('meta', [], 'evaluating the module', this.opts.loadTimeoutMs);
      this.meta = metaJson === 'null' ? undefined : JSON.parse(metaJson);
    } catch (e) {
      // The module threw as it ran: let go of the driver's handles, or freeing the runtime asserts
      // that every object was freed and prints emscripten's "Aborted(Assertion failed: list_empty…)".
      for (const h of Object.values(this.fns)) h.dispose();
      throw e;
    }
  }

  /**
   * The interrupt handler's memory check. QuickJS's own limit (setMemoryLimit) counts only 8 bytes
   * per allocation in this build (malloc_usable_size is unavailable: "memory allocated 41016 blocks,
   * 328128 bytes" for 40 MB of strings), so a guest holding 1 KB strings reached 496 MiB of
   * WebAssembly memory under a "64 MiB" limit. The real count (JS_ComputeMemoryUsage's "memory
   * used", walked over the heap: 0.06 ms for a small env, 4 ms at 100k objects) is taken whenever
   * this thread's WebAssembly memory grew since the last look, and every 128th interrupt (about
   * every 100 ms of running) for memory freed by others and reused; past the limit the call stops.
   */
  private overMemory(): boolean {
    const grown = quickJsMemoryBytes();
    if (grown === this.memSeen && ++this.memTicks < 128) return false;
    this.memSeen = grown;
    this.memTicks = 0;
    const m = /memory used\s+\d+\s+(\d+)/.exec(this.rt.dumpMemoryUsage());
    const used = m ? Number(m[1]) : 0;
    if (used <= this.opts.memoryBytes) return false;
    this.heldBytes = used;
    return true;
  }

  instance(): CodeEnvInstance {
    const id = Number(this.call('make', [], 'making an instance', this.opts.loadTimeoutMs));
    this.live++;
    const inst: CodeEnvInstance = {
      reset: (seed) => JSON.parse(this.call('reset', [id, seed], 'reset()')) as RawStep,
      step: (action) => {
        const r = JSON.parse(this.call('step', [id, action], 'step()')) as RawStep & { bad?: string; rewardKind?: string };
        if (r.bad !== undefined) throw new CodeEnvError(`step() returned ${r.bad}, not { observation, reward, terminated, truncated, info }`, lineOfExport(this.code, 'step'), 'contract');
        // Non-finite numbers cross as strings ('NaN'); any other kind is named for the host's message.
        if (r.rewardKind !== 'number') r.reward = r.rewardKind === 'undefined' ? undefined : `(${r.rewardKind})`;
        else if (typeof r.reward === 'string') r.reward = Number(r.reward);
        return r;
      },
      expert: () => JSON.parse(this.call('expert', [id], 'expert()')) as unknown,
      setChecking: (on) => void this.call('check', [id, on], 'check'),
      takeMutation: () => {
        const s = Number(this.call('mutation', [id], 'check'));
        return s < 0 ? null : { step: s, line: lineOfExport(this.code, 'step') };
      },
      takeClockLines: () => {
        const s = this.call('clock', [], 'check');
        return s === '' ? [] : s.split(',').map(Number).filter((n) => n > 0);
      },
      callTimeoutMs: this.opts.callTimeoutMs,
      probe: this.checking
        ? {
            heap: () => {
              const h = this.rt.computeMemoryUsage();
              try {
                // memory_used_size sums QuickJS's objects, shapes and atoms (this build has no malloc_usable_size,
                // so strings and Map/Set records are left out); malloc_count is every live allocation.
                const u = this.vm.dump(h) as { memory_used_size?: number; malloc_count?: number };
                return { bytes: Number(u.memory_used_size ?? 0), blocks: Number(u.malloc_count ?? 0) };
              } finally {
                h.dispose();
              }
            },
            bindingSizes: () => JSON.parse(this.call('sizes', [id], 'check', this.opts.loadTimeoutMs)) as Record<string, number>,
            setFreezing: (on) => void this.call('freeze', [id, on], 'check'),
            loopCounts: () => this.loopCounts(id),
          }
        : undefined,
    };
    this.registry.register(inst, id);
    return inst;
  }

  private release(id: number): void {
    this.live--;
    if (this.disposed) return;
    try {
      this.call('free', [id], 'free');
    } catch {
      // Freeing a finished instance cannot fail in a way that matters: the runtime goes with the module.
    }
    if (this.evicted && this.live === 0) this.dispose();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    try {
      for (const h of Object.values(this.fns)) h.dispose();
      this.vm.dispose();
      this.rt.dispose();
    } catch {
      // QuickJS asserts every object was freed; after some guest errors one leaks. The runtime is this module's own.
    }
  }

  private evalScript(src: string, file: string): void {
    this.deadline.at = performance.now() + this.opts.loadTimeoutMs;
    try {
      const r = this.vm.evalCode(src, file, { type: 'global' });
      if (r.error) {
        const e = this.vm.dump(r.error) as GuestError | null;
        r.error.dispose();
        throw this.describe(e, 'loading the module', this.opts.loadTimeoutMs);
      }
      r.value.dispose();
    } finally {
      this.deadline.at = Infinity;
    }
  }

  private call(fn: keyof Loaded['fns'], args: (number | string | boolean)[], what: string, limitMs = this.opts.callTimeoutMs): string {
    if (this.disposed) throw new Error('code env: its sandbox was closed');
    const vm = this.vm;
    const handles = args.map((a) => (typeof a === 'number' ? vm.newNumber(a) : typeof a === 'string' ? vm.newString(a) : a ? vm.true : vm.false));
    this.deadline.at = performance.now() + limitMs;
    try {
      const r = vm.callFunction(this.fns[fn], vm.undefined, ...handles);
      if (r.error) {
        const e = vm.dump(r.error) as GuestError | null;
        r.error.dispose();
        const d = this.describe(e, what, limitMs);
        if (d.rule === 'timeout' && (fn === 'reset' || fn === 'step' || fn === 'expert')) throw this.runaway(args[0] as number, e?.stack, what, limitMs) ?? d;
        throw d;
      }
      const out = vm.typeof(r.value) === 'string' ? vm.getString(r.value) : String(vm.dump(r.value));
      r.value.dispose();
      return out;
    } catch (e) {
      if (e instanceof CodeEnvError) throw e;
      throw new CodeEnvError(`the sandbox failed during ${what} (${e instanceof Error ? e.message : String(e)})`, null, 'exception');
    } finally {
      this.deadline.at = Infinity;
      for (const h of handles) if (h.alive && h !== vm.true && h !== vm.false) h.dispose();
    }
  }

  /** Each counted loop's iterations in instance `id`'s last call (its current run when the call was stopped). */
  private loopCounts(id: number): { line: number; count: number }[] {
    if (this.loopLines.length === 0) return [];
    const counts = JSON.parse(this.call('loops', [id], 'check', this.opts.loadTimeoutMs)) as number[];
    return this.loopLines.map((line, i) => ({ line, count: counts[i] ?? 0 }));
  }

  /**
   * A call of instance `id` stopped at its deadline: the loop that ran away is the counted loop
   * with the most iterations in its current run (a loop calling a helper is stopped inside the
   * helper as often as not, and QuickJS files an empty loop's back jump under an earlier line, so
   * the stack's line alone misleads); null when no loop is counted.
   */
  private runaway(id: number, stack: string | undefined, what: string, limitMs: number): CodeEnvError | null {
    let counts: { line: number; count: number }[];
    try {
      counts = this.loopCounts(id);
    } catch {
      return null;
    }
    const top = counts.reduce<{ line: number; count: number } | null>((a, c) => (c.count > 0 && (a === null || c.count >= a.count) ? c : a), null);
    if (top === null) return null;
    // The innermost frame, when the loop had called into another function (more than one frame of the module).
    const frames = [...(stack ?? '').matchAll(/at ([\w$.<>]+) \(env\.js:(\d+)/g)];
    const inner = frames.length > 1 && Number(frames[0][2]) !== top.line ? `; it was in ${frames[0][1]}() at line ${frames[0][2]} when stopped` : '';
    return new CodeEnvError(`${what} ran past its ${limitMs} ms limit and was stopped: the loop at line ${top.line} ran ${top.count.toLocaleString('en-US')} times in this call without ending${inner} (an infinite loop?)`, top.line, 'timeout', false);
  }

  private describe(thrown: GuestError | null, what: string, limitMs: number): CodeEnvError {
    const e: GuestError = thrown !== null && typeof thrown === 'object' ? thrown : { name: 'InternalError', message: thrown == null ? 'out of memory' : String(thrown) };
    const line = lineOfStack(e.stack);
    const msg = e.message ?? '';
    const mib = Math.round(this.opts.memoryBytes / 1048576);
    if (msg === 'interrupted' && this.heldBytes > 0) {
      const held = this.heldBytes;
      this.heldBytes = 0;
      return new CodeEnvError(`${what} ran out of memory (limit ${mib} MiB): it held ${Math.round(held / 1048576)} MiB when it was stopped`, line, 'memory');
    }
    if (msg === 'interrupted') return new CodeEnvError(`${what} ran past its ${limitMs} ms limit and was stopped (an infinite loop?)`, line, 'timeout');
    if (/out of memory/i.test(msg)) return new CodeEnvError(`${what} ran out of memory (limit ${mib} MiB)`, line, 'memory');
    if (e.name === 'InternalError' && /stack overflow/i.test(msg)) return new CodeEnvError(`${what} overflowed the sandbox's stack: recursion too deep`, line, 'exception');
    return new CodeEnvError(`${what} threw ${e.name ?? 'an error'}: ${msg}`, line, 'exception');
  }
}

function lineOfExport(code: string, name: string): number | null {
  const re = new RegExp(`^\\s*export\\s+(?:function|const|let|var)\\s+${name}\\b`);
  const i = code.split('\n').findIndex((l) => re.test(l));
  return i < 0 ? null : i + 1;
}

/** The QuickJS engine over the loaded WebAssembly (loadQuickJs first): modules cached by source. */
export function quickJsEngine(options: CodeEnvSandboxOptions = {}): CodeEnvEngine {
  const opts = { ...DEFAULT_CODE_ENV_SANDBOX, ...options };
  const cache = new Map<string, Loaded>();
  return {
    load(code: string, loadOpts: { checking?: boolean } = {}): CodeEnvGuest {
      const checking = loadOpts.checking === true;
      // The checking build (loop counters, probes) is a module of its own.
      const key = checking ? `\u0000checking\u0000${code}` : code;
      const hit = cache.get(key);
      if (hit) {
        cache.delete(key);
        cache.set(key, hit);
        return hit;
      }
      if (wasm === null) throw new Error('code env sandbox: the QuickJS WebAssembly is not loaded (await loadCodeEnvs() first)');
      const rt = wasm.newRuntime();
      rt.setMemoryLimit(opts.memoryBytes);
      rt.setMaxStackSize(opts.stackBytes);
      const vm = rt.newContext();
      let loaded: Loaded;
      try {
        loaded = new Loaded(code, rt, vm, opts, checking);
      } catch (e) {
        try {
          vm.dispose();
          rt.dispose();
        } catch {
          // A leak QuickJS asserts on: the runtime was this module's own.
        }
        throw e;
      }
      cache.set(key, loaded);
      while (cache.size > MAX_LOADED) {
        const [oldest, old] = cache.entries().next().value as [string, Loaded];
        cache.delete(oldest);
        old.evicted = true;
        if (old.live === 0) old.dispose();
      }
      return loaded;
    },
  };
}
