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
  const make = (id) => {
    const m = globalThis.__mk();
    if (typeof m.reset !== 'function') throw new TypeError('the module exports no function reset(seed)');
    if (typeof m.step !== 'function') throw new TypeError('the module exports no function step(action)');
    const i = typeof id === 'number' ? id : insts.length;
    insts[i] = { m, checking: false, prev: null, snap: null, steps: 0, mutated: null };
    return i;
  };
  // An id the host numbered itself (the V8 sandbox: making an instance needs no call) is made on first use.
  const at = (id) => insts[id] || (make(id), insts[id]);
  return {
    meta: () => { const m = globalThis.__mk(); return stringify(m.env === undefined ? null : m.env); },
    make,
    free: (id) => { insts[id] = null; },
    inst: at,
    check: (id, on) => { at(id).checking = on; },
    reset: (id, seed) => {
      const s = at(id);
      const o = s.m.reset(seed);
      s.steps = 0;
      const out = stringify({ observation: o === undefined ? null : o });
      if (s.checking) { s.prev = o; s.snap = out; }
      return out;
    },
    step: (id, action) => {
      const s = at(id);
      const r = s.m.step(action);
      s.steps++;
      if (s.checking && s.prev !== null && typeof s.prev === 'object' && s.mutated === null && stringify({ observation: s.prev }) !== s.snap) s.mutated = s.steps;
      if (r === null || typeof r !== 'object') return stringify({ bad: kind(r) });
      const out = stringify({ observation: r.observation === undefined ? null : r.observation, reward: fin(r.reward), rewardKind: kind(r.reward), terminated: r.terminated, truncated: r.truncated, info: r.info });
      if (s.checking) { s.prev = r.observation; s.snap = stringify({ observation: r.observation === undefined ? null : r.observation }); }
      return out;
    },
    expert: (id) => { const m = at(id).m; if (typeof m.expert !== 'function') return 'null'; const a = m.expert(); return stringify(a === undefined ? null : a); },
    mutation: (id) => { const s = at(id), m = s.mutated; s.mutated = null; return m === null ? -1 : m; },
    clock: () => { const out = clock.join(','); clock.length = 0; return out; },
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
  private readonly fns: Record<'meta' | 'make' | 'free' | 'check' | 'reset' | 'step' | 'expert' | 'mutation' | 'clock', QuickJSHandle>;
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
  ) {
    rt.setInterruptHandler(() => performance.now() > this.deadline.at || this.overMemory());
    this.evalScript(PRELUDE, 'prelude.js');
    this.evalScript(wrapModule(code), FILE);
    const drv = vm.getProp(vm.global, '__drv');
    const names = ['meta', 'make', 'free', 'check', 'reset', 'step', 'expert', 'mutation', 'clock'] as const;
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
        throw this.describe(e, what, limitMs);
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
    load(code: string): CodeEnvGuest {
      const hit = cache.get(code);
      if (hit) {
        cache.delete(code);
        cache.set(code, hit);
        return hit;
      }
      if (wasm === null) throw new Error('code env sandbox: the QuickJS WebAssembly is not loaded (await loadCodeEnvs() first)');
      const rt = wasm.newRuntime();
      rt.setMemoryLimit(opts.memoryBytes);
      rt.setMaxStackSize(opts.stackBytes);
      const vm = rt.newContext();
      let loaded: Loaded;
      try {
        loaded = new Loaded(code, rt, vm, opts);
      } catch (e) {
        try {
          vm.dispose();
          rt.dispose();
        } catch {
          // A leak QuickJS asserts on: the runtime was this module's own.
        }
        throw e;
      }
      cache.set(code, loaded);
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
