/**
 * What runs on the far side of the Node code-env sandbox (nodeVm.ts): the JavaScript the guest's
 * vm context is set up with (HARDEN, then the QuickJS prelude, then DRIVER, then the module), the
 * sandbox process that owns that context (CHILD), and the relay thread (WORKER) that answers the
 * host through shared memory and talks to the process over IPC. Plain JavaScript in strings: none
 * of it is imported by the host's realm.
 */

/** Host ↔ worker request ops (control word 1). */

export const OP = { load: 1, init: 2, call: 3, step: 4, reset: 5 } as const;
/** Control word 0: 0 booting, 1 a request is waiting (the worker's turn), 2 answered / ready (the host's turn). */
export const STATE = { booting: 0, request: 1, answered: 2 } as const;
/** Bytes a call's string answer may take in shared memory (the JSON of 256 slow-path steps of a 15×15 view fits). */
export const STRING_BYTES = 4 * 1024 * 1024;

/**
 * The shared numbers of one batch: per slot an action or seed (`nums`), reward, instance id,
 * heading, end flags (1 terminated, 2 truncated) and `imgBytes` cells, in one buffer (the same
 * layout on both sides of every boundary: the guest's own ArrayBuffer and the shared one).
 */
export interface BatchViews {
  nums: Float64Array;
  rew: Float64Array;
  ids: Int32Array;
  dirs: Uint8Array;
  flags: Uint8Array;
  img: Uint8Array;
}

/** Bytes `batchViews` uses for `cap` slots of `imgBytes` cells. */
export const batchBytes = (cap: number, imgBytes: number): number => cap * (8 + 8 + 4 + 1 + 1 + imgBytes);

export function batchViews(ab: ArrayBufferLike, cap: number, imgBytes: number, at = 0): BatchViews {
  const take = <T>(make: (o: number) => T, bytes: number): T => {
    const v = make(at);
    at += bytes;
    return v;
  };
  return {
    nums: take((o) => new Float64Array(ab, o, cap), 8 * cap),
    rew: take((o) => new Float64Array(ab, o, cap), 8 * cap),
    ids: take((o) => new Int32Array(ab, o, cap), 4 * cap),
    dirs: take((o) => new Uint8Array(ab, o, cap), cap),
    flags: take((o) => new Uint8Array(ab, o, cap), cap),
    img: take((o) => new Uint8Array(ab, o, cap * imgBytes), cap * imgBytes),
  };
}

/** Runs before the prelude: removes what could run guest code after a call returns, and the stack-trace hook. */
export const HARDEN = `(() => {
  for (const k of ['Promise', 'Atomics', 'SharedArrayBuffer', 'WebAssembly', 'WeakRef', 'FinalizationRegistry', 'console']) delete globalThis[k];
  Object.defineProperty(Error, 'prepareStackTrace', { value: undefined, writable: false, configurable: false });
})();`;

/**
 * The batch driver, run after the prelude and before the module: it captures what it uses, locks
 * `__drv` and itself in place, and exchanges numbers through one ArrayBuffer (layout in `views`).
 * Calls return a string: '' (every slot in the buffers), JSON { slow: [[slot, raw step], …] (slots
 * the host must read as JSON), info: [[slot, info], …] (non-empty infos of slots in the buffers) },
 * 'E' + JSON { k, name, message, stack } (a throw), or a call's value.
 */
export const DRIVER = `(() => {
  const drv = globalThis.__drv;
  Object.freeze(drv);
  Object.defineProperty(globalThis, '__drv', { value: drv, writable: false, configurable: false });
  const stringify = JSON.stringify, isArray = Array.isArray, keys = Object.keys, StringC = String;
  const AB = ArrayBuffer, I32 = Int32Array, F64 = Float64Array, U8 = Uint8Array;
  let IMG = 0, CAP = 0, MAX = 0, ids, nums, img, dirs, rew, flags;
  const fin = (x) => typeof x === 'number' && !(x - x === 0) ? StringC(x) : x;
  const kind = (x) => x === null ? 'null' : isArray(x) ? 'array' : typeof x;
  const err = (e, k) => {
    try {
      const o = e !== null && typeof e === 'object' ? e : { name: 'Error', message: StringC(e) };
      return 'E' + stringify({ k, name: StringC(o.name), message: StringC(o.message), stack: StringC(o.stack) });
    } catch (e2) { return 'E' + stringify({ k, name: 'Error', message: 'the module threw a value that cannot be described' }); }
  };
  const obs = (o, j) => {
    if (o === null || typeof o !== 'object') return false;
    const im = o.image, d = o.direction;
    if (typeof d !== 'number' || (d | 0) !== d || d < 0 || d > 3 || !isArray(im) || im.length !== IMG) return false;
    const base = j * IMG;
    for (let i = 0; i < IMG; i++) { const v = im[i]; if (typeof v !== 'number' || (v | 0) !== v || v < 0 || v > MAX) return false; img[base + i] = v; }
    dirs[j] = d;
    return true;
  };
  // A valid step goes into the numbers; a non-empty info object beside it as JSON (infos).
  const fast = (r, j, infos) => {
    if (r === null || typeof r !== 'object') return false;
    const w = r.reward, te = r.terminated, tr = r.truncated, inf = r.info;
    if (typeof w !== 'number' || !(w - w === 0) || typeof te !== 'boolean' || typeof tr !== 'boolean') return false;
    if (inf !== undefined && (inf === null || typeof inf !== 'object' || isArray(inf))) return false;
    if (!obs(r.observation, j)) return false;
    rew[j] = w; flags[j] = (te ? 1 : 0) | (tr ? 2 : 0);
    if (inf !== undefined && keys(inf).length > 0) infos.push(stringify([j, inf]));
    return true;
  };
  const answer = (slow, infos) => slow.length === 0 && infos.length === 0 ? '' : '{"slow":[' + slow.join(',') + '],"info":[' + infos.join(',') + ']}';
  const slowStep = (r) => r === null || typeof r !== 'object' ? { bad: kind(r) } : { observation: r.observation === undefined ? null : r.observation, reward: fin(r.reward), rewardKind: kind(r.reward), terminated: r.terminated, truncated: r.truncated, info: r.info };
  const CALLS = [() => drv.meta(), () => StringC(drv.make()), () => drv.free(ids[0]), () => drv.check(ids[0], nums[0] !== 0),
    () => drv.reset(ids[0], nums[0]), () => drv.step(ids[0], nums[0]), () => drv.expert(ids[0]), () => StringC(drv.mutation(ids[0])), () => drv.clock()];
  // The buffer the worker reads through views of its own. The worker takes this function off the
  // global before the module runs (the guest must never hold an ArrayBuffer: their bytes are
  // outside the heap cap) and calls it once.
  const init = (img1, cap, max) => {
    if (CAP !== 0) throw new Error('init: called twice');
    IMG = img1; CAP = cap; MAX = max;
    const ab = new AB(CAP * (8 + 8 + 4 + 1 + 1 + IMG));
    let at = 0;
    const take = (C, n, size) => { const v = new C(ab, at, n); at += n * size; return v; };
    nums = take(F64, CAP, 8); rew = take(F64, CAP, 8); ids = take(I32, CAP, 4); dirs = take(U8, CAP, 1); flags = take(U8, CAP, 1); img = take(U8, CAP * IMG, 1);
    return ab;
  };
  Object.defineProperty(globalThis, '__vecInit', { value: init, writable: false, configurable: true });
  const vec = {
    call(n) { try { const v = CALLS[n](); return v === undefined ? '' : v; } catch (e) { return err(e, 0); } },
    stepMany(n) {
      const slow = [], infos = [];
      for (let j = 0; j < n; j++) {
        let r;
        try { r = drv.inst(ids[j]).m.step(nums[j]); } catch (e) { return err(e, j); }
        try { if (!fast(r, j, infos)) slow.push(stringify([j, slowStep(r)])); } catch (e) { return err(e, j); }
      }
      return answer(slow, infos);
    },
    resetMany(n) {
      const slow = [];
      for (let j = 0; j < n; j++) {
        try {
          const o = drv.inst(ids[j]).m.reset(nums[j]);
          if (!obs(o, j)) slow.push(stringify([j, { observation: o === undefined ? null : o }]));
        } catch (e) { return err(e, j); }
      }
      return answer(slow, []);
    },
  };
  Object.defineProperty(globalThis, '__vec', { value: Object.freeze(vec), writable: false, configurable: false });
  // The guest gets no way to make an ArrayBuffer (the driver keeps its own constructors above):
  // backing stores are outside the heap that resourceLimits caps. Modules naming one run in QuickJS.
  for (const k of ['ArrayBuffer', 'DataView', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'Float16Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array']) delete globalThis[k];
})();`;


/** Why a sandbox process ended (control word 4, written by the relay once the process is gone). */
export const ENDED = { running: 0, memory: 1, crashed: 2, noStart: 3 } as const;

/**
 * The sandbox process (CommonJS, `node -e`): boots, makes the guest's context from the sources the
 * relay sends, then answers one request at a time over the IPC channel. It never reads a guest
 * object either: answers are primitive strings (refused, not copied, past `strBytes`), numbers
 * are copied out of the guest's ArrayBuffer through views of its own. A process of its own
 * because V8 ends the whole process on some allocation failures (a 400 MB array in a 80 MiB heap
 * is a fatal "heap out of memory", not an exception, and a worker thread's resourceLimits do not
 * contain it): here that ends only this process, and the relay reports it. It exits when the
 * channel closes (its relay or host is gone).
 */
export const CHILD = `
const vm = require('node:vm');
const { types } = require('node:util');
function batchViews(ab, cap, imgBytes) {
  let at = 0;
  const take = (C, n, size) => { const v = new C(ab, at, n); at += n * size; return v; };
  return { nums: take(Float64Array, cap, 8), rew: take(Float64Array, cap, 8), ids: take(Int32Array, cap, 4), dirs: take(Uint8Array, cap, 1), flags: take(Uint8Array, cap, 1), img: take(Uint8Array, cap * imgBytes, 1) };
}
let cap = 0, strBytes = 0, maxCell = 0, sources = null;
const scripts = new Map();
const script = (src) => { let s = scripts.get(src); if (!s) scripts.set(src, (s = new vm.Script(src))); return s; };
let ctx = null, g = null, IMG = 0, init = null;
const run = (src) => { const r = script(src).runInContext(ctx); return typeof r === 'string' ? r : null; };
function handle(op, n, arg, ids, nums) {
  if (op === ${OP.load}) {
    ctx = vm.createContext(Object.create(null), { name: 'code env', codeGeneration: { strings: false, wasm: false }, microtaskMode: 'afterEvaluate' });
    vm.runInContext(sources.prelude, ctx, { filename: 'prelude.js' });
    // The driver's buffer maker, off the global before any user code runs (see DRIVER).
    init = vm.runInContext('(() => { const f = globalThis.__vecInit; delete globalThis.__vecInit; return f; })()', ctx);
    vm.runInContext(sources.module, ctx, { filename: 'env.js' });
    return run('__vec.call(0)');
  }
  if (op === ${OP.init}) {
    IMG = n;
    const ab = init(n, cap, maxCell);
    if (!types.isArrayBuffer(ab)) return null;
    g = batchViews(ab, cap, IMG);
    return '';
  }
  for (let j = 0; j < n; j++) { g.ids[j] = ids[j]; g.nums[j] = nums[j]; }
  if (op === ${OP.call}) return run('__vec.call(' + arg + ')');
  return run(op === ${OP.step} ? '__vec.stepMany(' + n + ')' : '__vec.resetMany(' + n + ')');
}
process.on('disconnect', () => process.exit(0));
process.on('message', (m) => {
  if (m.boot) {
    ({ cap, strBytes, maxCell, sources } = m.boot);
    process.send({ ready: true });
    return;
  }
  let s = null;
  try { s = handle(m.op, m.n, m.arg, m.ids, m.nums); } catch { s = null; }
  // Past the cap the answer is refused here, never encoded or sent (a 200 MB string from step()).
  if (s !== null && (s.length > strBytes || Buffer.byteLength(s) > strBytes)) { process.send({ big: true }); return; }
  const out = { s };
  if ((m.op === ${OP.step} || m.op === ${OP.reset}) && (s === '' || (s !== null && s[0] === '{'))) {
    out.dirs = g.dirs.slice(0, m.n); out.flags = g.flags.slice(0, m.n); out.rew = g.rew.slice(0, m.n); out.img = g.img.slice(0, m.n * IMG);
  }
  process.send(out);
});
`;

/**
 * The relay (a worker thread, CommonJS, \`eval: true\`) between the host's synchronous shared-memory
 * channel and the sandbox process: it starts the process (its own V8 heap cap, no inherited
 * environment), waits on the control word without blocking (Atomics.waitAsync), forwards each
 * request over IPC and writes the answer into shared memory. When the process ends it says why
 * (control word 4: ENDED) and answers every request from then on with "ended" (string length -3),
 * so the host never waits on a dead sandbox, then ends. It has no deadline of its own: the host kills
 * the process (its pid is control word 5) when a request runs past it, and this thread ends with it.
 */
export const WORKER = `
const { workerData } = require('node:worker_threads');
const { spawn } = require('node:child_process');
function batchViews(ab, cap, imgBytes) {
  let at = 0;
  const take = (C, n, size) => { const v = new C(ab, at, n); at += n * size; return v; };
  return { nums: take(Float64Array, cap, 8), rew: take(Float64Array, cap, 8), ids: take(Int32Array, cap, 4), dirs: take(Uint8Array, cap, 1), flags: take(Uint8Array, cap, 1), img: take(Uint8Array, cap * imgBytes, 1) };
}
const { ctl, data, cap, maxImg, strAt, strBytes, sources, maxCell, heapMb, child: CHILD } = workerData;
const L = batchViews(data, cap, maxImg);
const strLen = new Int32Array(data, strAt, 1), strU8 = new Uint8Array(data, strAt + 4, strBytes);
const enc = new TextEncoder();
let ended = 0, stderr = '', waiting = null;
const proc = spawn(process.execPath, ['--max-old-space-size=' + heapMb, '--max-semi-space-size=8', '-e', CHILD], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced', env: {} });
Atomics.store(ctl, 5, proc.pid ?? 0);
proc.stderr.on('data', (d) => { if (stderr.length < 8192) stderr += d; });
const end = (why) => {
  if (ended) return;
  ended = why;
  Atomics.store(ctl, 4, why);
  if (waiting) { const w = waiting; waiting = null; w(null); }
};
proc.on('error', () => end(${ENDED.noStart}));
// Once the process is gone (and reaped: this thread's loop waits for it, so no zombie is left), this thread ends too.
proc.on('close', () => {
  end(/heap out of memory|invalid (?:array|table|string) length|allocation failed|Reached heap limit/i.test(stderr) ? ${ENDED.memory} : ${ENDED.crashed});
  setImmediate(() => process.exit(0));
});
proc.on('message', (m) => { if (waiting) { const w = waiting; waiting = null; w(m); } });
const reply = () => new Promise((resolve) => { waiting = resolve; });
function answer(m) {
  if (m === null) { strLen[0] = -3; return; }
  if (m.big) { strLen[0] = -2; return; }
  if (m.img) { L.dirs.set(m.dirs); L.flags.set(m.flags); L.rew.set(m.rew); L.img.set(m.img); }
  if (m.s === null) { strLen[0] = -1; return; }
  const r = enc.encodeInto(m.s, strU8);
  if (r.read < m.s.length) { strLen[0] = -2; return; }
  strLen[0] = r.written;
}
const done = () => { Atomics.store(ctl, 0, ${STATE.answered}); Atomics.notify(ctl, 0); };
(async () => {
  if (!ended) { proc.send({ boot: { cap, strBytes, maxCell, sources } }); await reply(); }
  done();
  for (;;) {
    const s = Atomics.load(ctl, 0);
    if (s !== ${STATE.request}) { const w = Atomics.waitAsync(ctl, 0, s); if (w.async) await w.value; continue; }
    const n = ctl[2];
    let m = null;
    if (!ended) {
      try {
        proc.send({ op: ctl[1], n, arg: ctl[3], ids: L.ids.slice(0, n), nums: L.nums.slice(0, n) });
        m = await reply();
      } catch { m = null; }
    }
    answer(m);
    done();
  }
})();
`;
