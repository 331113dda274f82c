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
 * Cost: one JSON string per score() call crosses into the sandbox (the records as columns), one
 * comes back; the guest renews the host's deadline at most every quarter of the call limit.
 */
import { newQuickJSWASMModuleFromVariant, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { exportLine, RESERVED_TERM_NAMES, RewardTermError, type RawTermScores, type RewardTermsScorer } from '../../core/reward/rewardTerms.ts';
import type { ScoreEpisode } from '../../core/reward/stepRecord.ts';

export interface SandboxOptions {
  /** Most wall time one term call may take, ms; the loop is interrupted past it. Default 100. */
  callTimeoutMs?: number;
  /** Most wall time evaluating the module's top level may take, ms. Default 1000. */
  loadTimeoutMs?: number;
  /** Heap limit of the sandbox, bytes. Default 64 MiB (a batch of step records is a few MiB). */
  memoryBytes?: number;
  /** Stack limit, bytes (deep recursion is an error, not a crash). Default 512 KiB. */
  stackBytes?: number;
}

export const DEFAULT_SANDBOX: Required<SandboxOptions> = { callTimeoutMs: 100, loadTimeoutMs: 1000, memoryBytes: 64 * 1024 * 1024, stackBytes: 512 * 1024 };

/** File name the user's module is evaluated under (it appears in stack traces as `reward.js:LINE`). */
const FILE = 'reward.js';

let modulePromise: Promise<QuickJSWASMModule> | null = null;
/** The QuickJS wasm module, loaded once per thread (~30 ms). */
function quickjs(): Promise<QuickJSWASMModule> {
  modulePromise ??= newQuickJSWASMModuleFromVariant(variant);
  return modulePromise;
}

/** Runs before the user's module: removes eval and makes the Function constructors throw. */
const HARDEN = `
(() => {
  const refuse = function () { throw new EvalError('code generation from strings is disabled in reward terms'); };
  for (const f of [function () {}, function* () {}, async function () {}, async function* () {}]) {
    Object.defineProperty(Object.getPrototypeOf(f), 'constructor', { value: refuse, writable: false, configurable: false });
  }
  Object.defineProperty(globalThis, 'Function', { value: refuse, writable: false, configurable: false });
  delete globalThis.eval;
})();
`;

/**
 * The scoring loop, evaluated before the user's module so it holds its own JSON and freeze. Per
 * episode: each step record gets `episode` (the steps before it), then every term is called on
 * it. `cur` says which term/episode/step runs, read by the host after an interrupt or exception.
 * `enter()` tells the host to push the deadline to now + limit + slack.
 */
const DRIVER = `
(() => {
  const parse = JSON.parse, stringify = JSON.stringify, freeze = Object.freeze, isFinite = Number.isFinite, now = Date.now;
  const cur = [-1, -1, -1];
  const describe = (v) => typeof v === 'number' ? String(v) : v === null ? 'null' : typeof v === 'string' ? 'a string' : typeof v;
  const score = (ns, names, json, enter, slackMs) => {
    const episodes = parse(json);
    let entered = -Infinity;
    const fns = names.map((n) => ns[n]);
    const out = [];
    for (let e = 0; e < episodes.length; e++) {
      const ep = episodes[e];
      const T = ep.a.length;
      const so = [];
      let ret = 0;
      const values = names.map(() => new Array(T));
      const bad = [];
      for (let t = 0; t < T; t++) {
        const s = freeze({
          t,
          observation: freeze({ text: ep.text[t], direction: ep.od[t], nextText: ep.nt[t] }),
          state: freeze({
            x: ep.x[t], y: ep.y[t], dir: ep.dir[t],
            carrying: ep.ct[t] < 0 ? null : freeze({ type: ep.ct[t], color: ep.cc[t] }),
            goal: ep.gx[t] < 0 ? null : freeze({ x: ep.gx[t], y: ep.gy[t] }),
            goalDistance: ep.gd[t] < 0 ? null : ep.gd[t],
          }),
          action: ep.a[t], actionName: ep.an[t], reward: ep.r[t], terminated: ep.te[t] === 1, truncated: ep.tr[t] === 1,
          info: freeze({ progress: ep.p[t], success: ep.su[t] === 1, toolCall: ep.tc[t], toolFailed: ep.tf[t] === 1, recovered: ep.rc[t] === 1, malformed: ep.mf[t] === 1 }),
          episode: freeze({ seed: ep.seed, envId: ep.envId, length: T, steps: so, returnSoFar: ret }),
        });
        for (let k = 0; k < fns.length; k++) {
          cur[0] = k; cur[1] = e; cur[2] = t;
          // Renew the host's deadline when the last renewal is slackMs old: every call then gets
          // at least the limit, at most limit + slack (a host call per term call costs ~10 µs).
          const ms = now();
          if (ms - entered >= slackMs) { enter(); entered = ms; }
          const v = fns[k](s);
          if (typeof v === 'number' && isFinite(v)) values[k][t] = v;
          else { values[k][t] = null; bad.push({ term: names[k], t, returned: describe(v) }); }
        }
        so.push(s);
        ret += s.reward;
      }
      out.push({ values, bad });
    }
    cur[0] = -1;
    return stringify(out);
  };
  return { score, where: () => cur.join(',') };
})()
`;

/**
 * An episode's records as columns (one array per field) for the trip into the sandbox: QuickJS
 * parses arrays of numbers and strings several times faster than one object per step, and the
 * driver builds each record once from them. −1 stands for null in the numeric columns.
 */
function columns(ep: ScoreEpisode) {
  const S = ep.steps;
  const col = <T>(f: (s: ScoreEpisode['steps'][number]) => T) => S.map(f);
  const flag = (b: boolean) => (b ? 1 : 0);
  return {
    seed: ep.seed,
    envId: ep.envId,
    text: col((s) => s.observation.text),
    od: col((s) => s.observation.direction),
    nt: col((s) => s.observation.nextText ?? null),
    x: col((s) => s.state.x),
    y: col((s) => s.state.y),
    dir: col((s) => s.state.dir),
    ct: col((s) => s.state.carrying?.type ?? -1),
    cc: col((s) => s.state.carrying?.color ?? -1),
    gx: col((s) => s.state.goal?.x ?? -1),
    gy: col((s) => s.state.goal?.y ?? -1),
    gd: col((s) => s.state.goalDistance ?? -1),
    a: col((s) => s.action),
    an: col((s) => s.actionName),
    r: col((s) => s.reward),
    te: col((s) => flag(s.terminated)),
    tr: col((s) => flag(s.truncated)),
    p: col((s) => s.info.progress),
    su: col((s) => flag(s.info.success)),
    tc: col((s) => s.info.toolCall),
    tf: col((s) => flag(s.info.toolFailed)),
    rc: col((s) => flag(s.info.recovered)),
    mf: col((s) => flag(s.info.malformed)),
  };
}

interface GuestError {
  name?: string;
  message?: string;
  stack?: string;
}

/** The line in reward.js where the error was raised (from QuickJS's stack: "at fn (reward.js:3)"). */
function errorLine(err: GuestError): number | null {
  const m = /reward\.js:(\d+)/.exec(err.stack ?? '');
  return m ? Number(m[1]) : null;
}

class QuickJsRewardScorer implements RewardTermsScorer {
  private closed = false;
  private broken: RewardTermError | null = null;

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

  async score(episodes: readonly ScoreEpisode[]): Promise<RawTermScores[]> {
    if (this.closed) throw new Error('reward sandbox: score() after close()');
    if (this.broken) throw this.broken;
    if (episodes.length === 0 || this.terms.length === 0) return episodes.map((ep) => ({ values: Object.fromEntries(this.terms.map((n) => [n, new Float64Array(ep.steps.length)])), bad: [] }));
    const { vm } = this;
    const scoreFn = vm.getProp(this.driver, 'score');
    const names = vm.newArray();
    this.terms.forEach((n, i) => vm.setProp(names, i, vm.newString(n)));
    const json = vm.newString(JSON.stringify(episodes.map(columns)));
    // A term call may run between callTimeoutMs and callTimeoutMs + slack before it is stopped.
    const slack = Math.max(1, Math.round(this.opts.callTimeoutMs / 4));
    const limit = this.opts.callTimeoutMs + slack;
    const enter = vm.newFunction('enter', () => {
      this.deadline.at = performance.now() + limit;
    });
    const slackH = vm.newNumber(slack);
    try {
      const r = vm.callFunction(scoreFn, vm.undefined, this.ns, names, json, enter, slackH);
      this.deadline.at = Infinity;
      if (r.error) {
        const err = vm.dump(r.error) as GuestError;
        r.error.dispose();
        throw (this.broken = this.describeFailure(err, episodes));
      }
      const out = JSON.parse(vm.getString(r.value)) as { values: (number | null)[][]; bad: RawTermScores['bad'] }[];
      r.value.dispose();
      return out.map((o) => ({
        values: Object.fromEntries(this.terms.map((n, k) => [n, Float64Array.from(o.values[k], (v) => (v === null ? NaN : v))])),
        bad: o.bad,
      }));
    } finally {
      this.deadline.at = Infinity;
      for (const h of [scoreFn, names, json, enter, slackH]) if (h.alive) h.dispose();
    }
  }

  /** Turns a guest failure into a message naming the term, the line and the episode's seed. */
  private describeFailure(err: GuestError, episodes: readonly ScoreEpisode[]): RewardTermError {
    const whereH = this.vm.getProp(this.driver, 'where');
    const w = this.vm.callFunction(whereH, this.vm.undefined);
    whereH.dispose();
    let k = -1, e = -1, t = -1;
    if (!w.error) {
      [k, e, t] = this.vm.getString(w.value).split(',').map(Number);
      w.value.dispose();
    } else w.error.dispose();
    const term = k >= 0 ? this.terms[k] : null;
    const seed = e >= 0 ? episodes[e].seed : null;
    const at = term === null ? 'the reward module' : `reward term '${term}'`;
    const where = seed === null ? '' : ` at step ${t} of the episode with seed ${seed}`;
    const msg = err.message ?? String(err);
    if (msg === 'interrupted') {
      const line = term === null ? null : this.lineOf(term);
      return new RewardTermError('timeout', `${at}${line ? ` (line ${line})` : ''} ran past its ${this.opts.callTimeoutMs} ms limit per call${where} and was stopped (an infinite loop?)`, term, seed);
    }
    if (/out of memory/i.test(msg)) {
      return new RewardTermError('memory', `${at} ran out of memory (limit ${Math.round(this.opts.memoryBytes / 1048576)} MiB)${where}`, term, seed);
    }
    const line = errorLine(err) ?? (term === null ? null : this.lineOf(term));
    return new RewardTermError('exception', `${at} threw ${err.name ?? 'an error'}: ${msg}${line ? ` (line ${line})` : ''}${where}`, term, seed);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const h of [this.ns, this.driver]) if (h.alive) h.dispose();
    this.vm.dispose();
    this.rt.dispose();
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
  const mod = await quickjs();
  const rt = mod.newRuntime();
  rt.setMemoryLimit(opts.memoryBytes);
  rt.setMaxStackSize(opts.stackBytes);
  const deadline = { at: Infinity };
  rt.setInterruptHandler(() => performance.now() > deadline.at);
  // No module loader: `import` of anything fails with QuickJS's own message.
  const vm = rt.newContext();
  const fail = (msg: string): never => {
    vm.dispose();
    rt.dispose();
    throw new RewardTermError('load', msg);
  };
  const run = (src: string, name: string, type: 'global' | 'module') => {
    deadline.at = performance.now() + opts.loadTimeoutMs;
    const r = vm.evalCode(src, name, { type });
    deadline.at = Infinity;
    return r;
  };
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

  const r = run(code, FILE, 'module');
  if (r.error) {
    const e = vm.dump(r.error) as GuestError;
    r.error.dispose();
    driver.dispose();
    const line = errorLine(e);
    const msg = e.message === 'interrupted' ? `ran past its ${opts.loadTimeoutMs} ms limit while loading and was stopped (an infinite loop at the top level?)` : `${e.name ?? 'Error'}: ${e.message}`;
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
  // Export names and kinds, read inside the sandbox (the namespace is an exotic object).
  const keysR = vm.evalCode('(ns) => JSON.stringify(Object.keys(ns).map((k) => [k, typeof ns[k]]))', 'keys.js');
  const keysFn = (keysR as { value: QuickJSHandle }).value;
  const kr = vm.callFunction(keysFn, vm.undefined, ns);
  keysFn.dispose();
  const exportsList = JSON.parse(vm.getString((kr as { value: QuickJSHandle }).value)) as [string, string][];
  (kr as { value: QuickJSHandle }).value.dispose();
  const problems: string[] = [];
  for (const [name, kind] of exportsList) {
    const line = exportLine(code, name);
    const at = line ? ` (line ${line})` : '';
    if (name === 'default') problems.push(`the default export${at} is not a term: export each term under its name (export const name = (step) => …)`);
    else if (kind !== 'function') problems.push(`export '${name}'${at} is a ${kind}, not a function (step) => number`);
    else if ((RESERVED_TERM_NAMES as readonly string[]).includes(name)) problems.push(`export '${name}'${at} has the name of a built-in reward metric (${RESERVED_TERM_NAMES.join(', ')}); rename it`);
  }
  if (exportsList.length === 0) problems.push('the module exports no terms: export at least one function, e.g. export const stepCost = (step) => -0.01');
  if (problems.length > 0) {
    ns.dispose();
    driver.dispose();
    fail(`reward module: ${problems.join('; ')}`);
  }
  // Export order in QuickJS's namespace is alphabetical; report terms in source order instead.
  const terms = exportsList.map(([n]) => n).sort((a, b) => (exportLine(code, a) ?? 0) - (exportLine(code, b) ?? 0));
  return new QuickJsRewardScorer(terms, code, rt, vm, ns, driver, opts, deadline);
}
