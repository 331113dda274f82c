/**
 * What runs on the far side of the Node code-env sandbox (nodeVm.ts): the JavaScript the guest's
 * vm context is set up with (HARDEN, then the QuickJS prelude, then DRIVER, then the module) and
 * the sandbox process that owns that context (CHILD) and answers the host over two FIFOs. Plain
 * JavaScript in strings: none of it is imported by the host's realm.
 */

/** Host → sandbox request ops (op 0 is the boot frame). */

export const OP = { load: 1, init: 2, call: 3, step: 4, reset: 5 } as const;
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
  // The buffer the sandbox process reads through views of its own. The process takes this function off the
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


/**
 * The sandbox process (CommonJS, `node -e CHILD REQ RES`): opens the two FIFOs, boots from the
 * first frame (the sources), makes the guest's context, then answers one request at a time with
 * blocking reads and writes (no event loop: the host's request wakes it directly). It never reads
 * a guest object either: answers are primitive strings (refused, not copied, past `strBytes`),
 * numbers are copied out of the guest's ArrayBuffer through views of its own. A process of its
 * own because V8 ends the whole process on some allocation failures (a 400 MB array in an 80 MiB
 * heap is a fatal "heap out of memory", not an exception, and a worker thread's resourceLimits do
 * not contain it): here that ends only this process. It exits when the request pipe has no writer
 * left (its host is gone).
 *
 * Frames, little-endian, each after a u32 length: a request is i32 op, i32 n, i32 arg, n i32 ids,
 * n f64 numbers (op 0: the boot JSON instead); an answer is i32 string length (-1: none, -2: over
 * the cap), u32 slots m, the string's bytes, then m headings, m flags, m f64 rewards and m slots'
 * cells (step and reset answers whose numbers are in the views).
 */
export const CHILD = `
const fs = require('node:fs');
const vm = require('node:vm');
const { types } = require('node:util');
function batchViews(ab, cap, imgBytes) {
  let at = 0;
  const take = (C, n, size) => { const v = new C(ab, at, n); at += n * size; return v; };
  return { nums: take(Float64Array, cap, 8), rew: take(Float64Array, cap, 8), ids: take(Int32Array, cap, 4), dirs: take(Uint8Array, cap, 1), flags: take(Uint8Array, cap, 1), img: take(Uint8Array, cap * imgBytes, 1) };
}
const [reqPath, resPath] = process.argv.slice(1);
const inFd = fs.openSync(reqPath, 'r'), outFd = fs.openSync(resPath, 'w');
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
function readFully(buf, len) {
  for (let got = 0; got < len; ) {
    const k = fs.readSync(inFd, buf, got, len - got, null);
    if (k === 0) process.exit(0);
    got += k;
  }
}
let out = Buffer.alloc(1 << 16);
function reply(s, op, n) {
  let len = s === null ? -1 : Buffer.byteLength(s);
  // Past the cap the answer is refused here, never copied or sent (a 200 MB string from step()).
  if (len > strBytes) { len = -2; s = null; }
  const m = (op === ${OP.step} || op === ${OP.reset}) && (s === '' || (s !== null && s[0] === '{')) ? n : 0;
  const total = 12 + Math.max(0, len) + m * (10 + IMG);
  if (out.length < total) out = Buffer.alloc(total);
  out.writeUInt32LE(total - 4, 0);
  out.writeInt32LE(len, 4);
  out.writeUInt32LE(m, 8);
  let at = 12;
  if (len > 0) at += out.write(s, 12, 'utf8');
  if (m > 0) {
    out.set(g.dirs.subarray(0, m), at); at += m;
    out.set(g.flags.subarray(0, m), at); at += m;
    out.set(new Uint8Array(g.rew.buffer, g.rew.byteOffset, 8 * m), at); at += 8 * m;
    out.set(g.img.subarray(0, m * IMG), at);
  }
  for (let w = 0; w < total; ) w += fs.writeSync(outFd, out, w, total - w);
}
const head = Buffer.alloc(4);
let inBuf = Buffer.alloc(1 << 16);
for (;;) {
  readFully(head, 4);
  const len = head.readUInt32LE(0);
  if (inBuf.length < len) inBuf = Buffer.alloc(len);
  readFully(inBuf, len);
  const op = inBuf.readInt32LE(0);
  if (op === 0) {
    ({ cap, strBytes, maxCell, sources } = JSON.parse(inBuf.toString('utf8', 4, len)));
    reply('', 0, 0);
    continue;
  }
  const n = inBuf.readInt32LE(4), arg = inBuf.readInt32LE(8);
  const ids = new Int32Array(n), nums = new Float64Array(n);
  for (let j = 0; j < n; j++) { ids[j] = inBuf.readInt32LE(12 + 4 * j); nums[j] = inBuf.readDoubleLE(12 + 4 * n + 8 * j); }
  let s = null;
  try { s = handle(op, n, arg, ids, nums); } catch { s = null; }
  reply(s, op, n);
}
`;
