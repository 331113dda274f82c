/**
 * The JavaScript the reward sandbox evaluates inside QuickJS before the user's module (the
 * hardening and the scoring driver), and the column form episodes travel in to reach it.
 */
import type { ScoreEpisode } from '../../core/reward/stepRecord.ts';

/** Runs before the user's module: removes eval and makes the Function constructors throw. */
export const HARDEN = `
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
 * The scoring loop, evaluated before the user's module so it holds its own JSON, freeze and
 * Array.prototype.slice (a module that replaces them cannot reach into it).
 * `start(ns, names, json)` takes a chunk of episodes; `run(enter, slackMs, sliceMs)` scores
 * until the chunk is done (it returns the results as JSON) or `sliceMs` has passed (it returns
 * null; call it again to go on). Per episode: each step record gets `episode` (with the steps
 * before it), then every term is called on it. `cur` says which term/episode/step runs,
 * read by the host after an interrupt or exception. `enter()` tells the host to push the deadline
 * to now + limit + slack.
 */
export const DRIVER = `
(() => {
  const parse = JSON.parse, stringify = JSON.stringify, freeze = Object.freeze, isFinite = Number.isFinite, now = Date.now;
  const apply = Reflect.apply, slice = Array.prototype.slice;
  const cur = [-1, -1, -1];
  // episode.steps: each term has its own array of the episode's steps so far (made at its first
  // read, then grown as steps are scored), so what one term does to its list never reaches
  // another. A list its term changed is rebuilt from the records when its end no longer matches.
  const stepsFor = (so, mine) => {
    const k = cur[0], n = so.length;
    let a = mine[k];
    if (a !== undefined) {
      const m = a.length;
      if (m <= n && (m === 0 || a[m - 1] === so[m - 1])) {
        for (let i = m; i < n; i++) a[i] = so[i];
        if (a.length === n) return a;
      }
    }
    return (mine[k] = apply(slice, so, [0, n]));
  };
  const describe = (v) => typeof v === 'number' ? String(v) : v === null ? 'null' : typeof v === 'string' ? 'a string' : typeof v;
  let job = null;
  const start = (ns, names, json) => {
    const fns = [];
    for (let k = 0; k < names.length; k++) fns[k] = ns[names[k]];
    const zeros = () => names.map(() => 0);
    job = { fns, names, episodes: parse(json), e: 0, t: 0, so: null, mine: null, ret: 0, values: null, bad: null, out: [], calls: zeros(), over: zeros(), ms: zeros() };
  };
  // A term is too slow when most of its calls so far (at least SLOW_CALLS of them) each took
  // longer than limitMs: its typical call, not one call that the OS descheduled under load.
  const SLOW_CALLS = 3;
  const run = (enter, slackMs, sliceMs, limitMs) => {
    const j = job, fns = j.fns, names = j.names, episodes = j.episodes;
    const until = now() + sliceMs;
    let entered = -Infinity, ms = 0, did = false;
    while (j.e < episodes.length) {
      const ep = episodes[j.e];
      const T = ep.a.length;
      if (j.t === 0) {
        j.so = []; j.mine = []; j.ret = 0; j.bad = [];
        j.values = [];
        for (let k = 0; k < names.length; k++) j.values[k] = new Array(T);
      }
      const so = j.so, mine = j.mine, vals = j.values, bad = j.bad;
      while (j.t < T) {
        if (did && ms >= until) return null;
        did = true;
        const t = j.t;
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
          episode: freeze({
            seed: ep.seed, envId: ep.envId, length: T,
            get steps() { return stepsFor(so, mine); },
            returnSoFar: j.ret,
          }),
        });
        for (let k = 0; k < fns.length; k++) {
          cur[0] = k; cur[1] = j.e; cur[2] = t;
          // Renew the host's deadline when the last renewal is slackMs old: every call then gets
          // at least the limit, at most limit + slack (a host call per term call costs ~10 µs).
          ms = now();
          if (ms - entered >= slackMs) { enter(); entered = ms; }
          const v = fns[k](s);
          const d = now() - ms;
          j.calls[k]++; j.ms[k] += d;
          if (d > limitMs && ++j.over[k] >= SLOW_CALLS && 2 * j.over[k] > j.calls[k]) {
            throw { name: 'SlowTerm', message: 'slow', perCallMs: j.ms[k] / j.calls[k], calls: j.calls[k], over: j.over[k] };
          }
          if (typeof v === 'number' && isFinite(v)) vals[k][t] = v;
          else { vals[k][t] = null; bad[bad.length] = { term: names[k], t, returned: describe(v) }; }
        }
        so[t] = s;
        j.ret += s.reward;
        j.t = t + 1;
      }
      j.out[j.out.length] = { values: vals, bad };
      j.e++; j.t = 0; j.so = null; j.mine = null;
    }
    cur[0] = -1;
    const out = stringify(j.out);
    job = null;
    return out;
  };
  // The module's exports and their kinds (read with the functions captured here: the module may have replaced JSON or Object.keys).
  const okeys = Object.keys;
  const exportsOf = (ns) => {
    const ks = okeys(ns), out = [];
    for (let i = 0; i < ks.length; i++) out[i] = [ks[i], typeof ns[ks[i]]];
    return stringify(out);
  };
  return { start, run, exportsOf, where: () => cur[0] + ',' + cur[1] + ',' + cur[2] };
})()
`;

/**
 * An episode's records as columns (one array per field) for the trip into the sandbox: QuickJS
 * parses arrays of numbers and strings several times faster than one object per step, and the
 * driver builds each record once from them. −1 stands for null in the numeric columns.
 */
export function columns(ep: ScoreEpisode) {
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
