/**
 * Suite `tab`: the first minute in the built app. Builds the app (a production bundle, as the
 * e2e tests do), serves it from a sub-path with COOP/COEP and the precompressed assets
 * (e2e/serve.ts), opens it in Chromium (Debian's, through playwright-core) and presses Start:
 *
 * - per preset, in a fresh browser context (empty cache and storage: a student's first visit),
 *   the time from Start to the first and the tenth iteration shown, the steady iterations/s
 *   after that, and the bytes sent until the first iteration (page load included);
 * - a second Start in the first preset's tab (Reset, then Start: a new run on a warm cache);
 * - the CLI's figures on the same presets in the same run (`npm run train`, spawn to each
 *   iteration's line), so the tab's overhead reads against the same machine at the same load;
 * - where the first iteration's time goes, from the `arl:*` marks the page and the training
 *   worker leave (src/runtime/marks.ts) and the server's request log.
 *
 * The JSON line's top level carries `first_iteration_s` (first preset, first Start in a fresh
 * tab), `cli_first_iteration_s` (the CLI's first iteration on that preset) and
 * `bytes_to_first_iteration` (bytes over the wire until then, precompressed assets served).
 */
import { execSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launch, watchErrors } from '../../e2e/browser.ts';
import { serveStatic, type ServedRequest, type StaticServer } from '../../e2e/serve.ts';
import { sig } from '../lib/stats.ts';
import { table } from '../lib/table.ts';
import { UsageError, type SuiteOptions, type SuiteResult } from '../lib/suite.ts';

const DEFAULT_PRESETS = ['grid-empty-8x8-grpo', 'grid-door-key-ppo', 'calc-grpo'];

/**
 * Every preset in presets/ on a tool env (`--presets tools`): whichever exist when the bench runs,
 * so presets added later (short warm starts, none at all) are measured without naming them.
 */
export function toolPresets(dir = 'presets'): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .filter((f) => {
      const j = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { env?: { id?: string } };
      return typeof j.env?.id === 'string' && j.env.id.startsWith('tools/');
    })
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

/** One mark from the page or a worker, on the epoch clock (ms). */
interface Mark {
  where: string;
  name: string;
  atMs: number;
  detail?: Record<string, number>;
}

export interface TabTrial {
  preset: string;
  /** 'fresh': a new browser context (empty cache and storage); 'second': Reset then Start in the same tab. */
  kind: 'fresh' | 'second';
  firstS: number;
  tenthS: number | null;
  steadyItPerS: number | null;
  /** Bytes over the wire from navigation (or the second Start) until the first iteration showed. */
  bytesToFirst: number;
  /** The same, response bodies only, by file (largest first). */
  files: { path: string; bytes: number; encoding: string }[];
  engine: string;
  /** Seconds from Start to each phase's end (see phases()). */
  phases: Record<string, number>;
  errors: string[];
  /** The page was cross-origin isolated (SharedArrayBuffer, so WASM threads were possible). */
  isolated: boolean;
  /** navigator.hardwareConcurrency in the page. */
  cores: number;
}

export interface CliTrial {
  preset: string;
  /** Spawn of `node --import tsx src/cli/train.ts` to its iteration lines, s. */
  firstS: number;
  tenthS: number | null;
  steadyItPerS: number | null;
}

const nowMs = () => Date.now();

/** Waits for `fn` to return a value (not undefined), polling; throws after `timeoutMs`. */
async function until<T>(fn: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`tab: timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * In-page code is passed as source text: tsx compiles this file with esbuild's keepNames, whose
 * `__name(...)` wrappers do not exist in the page.
 */
const READ_MARKS = `performance.getEntriesByType('mark').filter((m) => m.name.startsWith('arl:')).map((m) => ({ name: m.name.slice(4), atMs: performance.timeOrigin + m.startTime, detail: m.detail ?? undefined }))`;

/** Every `arl:*` mark of the page and its workers (workers that ended take theirs with them). */
async function marks(page: Page): Promise<Mark[]> {
  const out: Mark[] = ((await page.evaluate(READ_MARKS)) as Omit<Mark, 'where'>[]).map((m) => ({ ...m, where: 'page' }));
  for (const w of page.workers()) {
    try {
      const name = new URL(w.url()).pathname.split('/').pop() ?? w.url();
      out.push(...((await w.evaluate(READ_MARKS)) as Omit<Mark, 'where'>[]).map((m) => ({ ...m, where: name })));
    } catch {
      // the worker ended meanwhile
    }
  }
  return out.sort((a, b) => a.atMs - b.atMs);
}

/**
 * Seconds from Start to the end of each phase of the first iteration, from the marks after
 * `t0`: the training worker's script running, the ORT module imported, its WASM runtime
 * started, the backend timing done, the run built (sessions), the first step, shown.
 */
function phases(all: Mark[], t0: number, firstAt: number, requests: ServedRequest[]): Record<string, number> {
  // The training worker is the one whose run started after t0 (a prewarmed one has marks from before).
  const trainer = all.find((m) => m.name === 'start-begin' && m.atMs >= t0)?.where;
  const mine = all.filter((m) => m.where === trainer);
  const warmEnd = mine.find((m) => m.name === 'warm-end');
  const ms = mine.filter((m) => m.atMs >= t0 - 1);
  const at = (name: string) => ms.find((m) => m.name === name)?.atMs;
  const s = (x: number | undefined) => (x === undefined ? NaN : sig((x - t0) / 1000, 3));
  const wasm = requests.filter((r) => r.path.endsWith('.wasm') && r.startMs >= t0 - 1 && r.path.includes('ort-'));
  const step = ms.find((m) => m.name === 'step-end:0');
  const out: Record<string, number> = {
    worker_ready: s(at('worker-ready')),
    ort_imported: s(ms.find((m) => m.name.startsWith('ort-imported'))?.atMs),
    ort_wasm_fetched: s(wasm.length ? Math.max(...wasm.map((r) => r.endMs)) : undefined),
    ort_runtime: s(ms.find((m) => m.name.startsWith('ort-runtime'))?.atMs),
    measured: s(at('measure-end')),
    start_begin: s(at('start-begin')),
    run_built: s(at('start-end')),
    first_step_begin: s(at('step-begin:0')),
    first_step_end: s(step?.atMs),
    warm_start_first_step: s(at('warm-start-first-step')),
    warm_start_end: s(at('warm-start-end')),
    // 1 when a shipped warm start (public/warm-start/) was loaded instead of trained.
    warm_start_loaded: ms.some((m) => m.name === 'warm-start-loaded') ? 1 : 0,
    shown: s(firstAt),
    // 1 when the engine was warmed before Start (prewarm), else 0; how long before Start it was ready.
    prewarmed: warmEnd && warmEnd.atMs < t0 ? 1 : 0,
  };
  // Threads the training worker's ORT runs with (its runtime may have loaded before Start).
  const runtime = mine.find((m) => m.name.startsWith('ort-runtime'));
  if (runtime?.detail?.threads !== undefined) out.threads = runtime.detail.threads;
  if (warmEnd && warmEnd.atMs < t0) out.warm_ready_before_start = sig((t0 - warmEnd.atMs) / 1000, 3);
  // The backend timing made before Start (premeasure): ready before Start (negative) or after it.
  const pre = mine.find((m) => m.name === 'premeasure-end');
  out.premeasured = pre ? 1 : 0;
  if (pre) out.premeasure_end = sig((pre.atMs - t0) / 1000, 3);
  if (step?.detail) {
    // The step trainer overlaps rollouts with updates: the wait for the batch, then the update.
    if (step.detail.trainS !== undefined && step.detail.iterationS !== undefined) out.first_step_rollout_wait = sig(step.detail.iterationS - step.detail.trainS, 3);
    if (step.detail.trainS !== undefined) out.first_step_train = sig(step.detail.trainS, 3);
  }
  const second = ms.find((m) => m.name === 'step-end:1');
  if (second?.detail?.iterationS !== undefined) out.second_step = sig(second.detail.iterationS, 3);
  if (second?.detail?.trainS !== undefined && second.detail.iterationS !== undefined) out.second_step_rollout_wait = sig(second.detail.iterationS - second.detail.trainS, 3);
  if (second?.detail?.trainS !== undefined) out.second_step_train = sig(second.detail.trainS, 3);
  return out;
}

/** Records when each iteration number first shows in the run bar (epoch ms), in the page. */
const WATCH_ITERATIONS = `(() => {
  window.__itObserver?.disconnect();
  window.__its = [];
  const el = document.querySelector('[data-testid=train-status]');
  let last = Number(el.getAttribute('data-iteration') ?? 0);
  window.__itObserver = new MutationObserver(() => {
    const it = Number(el.getAttribute('data-iteration') ?? 0);
    if (it > last) window.__its.push({ it, at: performance.timeOrigin + performance.now() });
    last = it;
  });
  window.__itObserver.observe(el, { attributes: true, attributeFilter: ['data-iteration'] });
})()`;

const watchIterations = (page: Page) => page.evaluate(WATCH_ITERATIONS);

const iterations = async (page: Page) => (await page.evaluate('window.__its')) as { it: number; at: number }[];

/** Presses Start (in the page, so the timestamp is the click's) and returns its epoch ms. */
const pressStart = async (page: Page) =>
  (await page.evaluate(`(() => {
    const t = performance.timeOrigin + performance.now();
    document.querySelector('[data-testid=train-start]').click();
    return t;
  })()`)) as number;

/** From Start (t0): the first and tenth iteration shown, the rate from the tenth to the last. */
async function follow(page: Page, t0: number, total: number, timeoutMs: number, onFirst: () => void): Promise<{ firstAt: number; tenthAt: number | null; steady: number | null }> {
  const first = await until(async () => (await iterations(page)).find((x) => x.it >= 1), timeoutMs, 'the first iteration');
  onFirst();
  const done = await until(async () => {
    const its = await iterations(page);
    return its.at(-1)!.it >= total ? its : undefined;
  }, timeoutMs + (first.at - t0), `iteration ${total}`);
  const tenth = done.find((x) => x.it >= 10) ?? null;
  const last = done.at(-1)!;
  const steady = tenth && last.it > tenth.it ? ((last.it - tenth.it) * 1000) / (last.at - tenth.at) : null;
  return { firstAt: first.at, tenthAt: tenth?.at ?? null, steady };
}

/** Body bytes per file of the requests answered in [from, to] (epoch ms), largest first. */
function filesBetween(requests: readonly ServedRequest[], from: number, to: number) {
  return requests
    .filter((r) => r.startMs >= from && r.endMs <= to && r.bytes > 0)
    .map((r) => ({ path: r.path.split('/').pop() ?? r.path, bytes: r.bytes, encoding: r.encoding }))
    .sort((a, b) => b.bytes - a.bytes);
}

/** Wire bytes written from `fromWire` until the last response that ended by `to`. */
function wireUntil(requests: readonly ServedRequest[], fromWire: number, to: number): number {
  const done = requests.filter((r) => r.endMs <= to);
  return done.length ? Math.max(...done.map((r) => r.wireAtEnd)) - fromWire : 0;
}

async function tabRun(
  browser: Browser,
  server: StaticServer,
  preset: string,
  o: { total: number; idleMs: number; timeoutMs: number; second: boolean; progress: (t: string) => void },
): Promise<TabTrial[]> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  const errors = watchErrors(page);
  const out: TabTrial[] = [];
  try {
    const wire0 = server.wireBytes();
    const nav0 = nowMs();
    await page.goto(`${server.url}#view=train&preset=${preset}&iterations=${o.total}`);
    // Backend detection done (the status bar names one): what a person sees before pressing Start.
    await page.getByTestId('backend-status').and(page.locator('[data-backend]')).waitFor({ timeout: o.timeoutMs });
    await page.getByTestId('train-start').waitFor({ timeout: o.timeoutMs });
    await new Promise((r) => setTimeout(r, o.idleMs));
    for (const kind of o.second ? (['fresh', 'second'] as const) : (['fresh'] as const)) {
      if (kind === 'second') {
        // The first run ends by itself at `total` iterations.
        await until(async () => ((await page.getByTestId('train-status').getAttribute('data-status')) === 'finished' ? true : undefined), o.timeoutMs, 'the first run to finish');
        await page.getByTestId('train-reset').click();
        await until(async () => ((await page.getByTestId('train-status').getAttribute('data-iteration')) === '0' ? true : undefined), o.timeoutMs, 'the reset');
        await new Promise((r) => setTimeout(r, o.idleMs));
      }
      const from = kind === 'fresh' ? nav0 : nowMs();
      const fromWire = kind === 'fresh' ? wire0 : server.wireBytes();
      await watchIterations(page);
      o.progress(`tab: ${preset}, ${kind} Start`);
      const t0 = await pressStart(page);
      let firstSeen = 0;
      const r = await follow(page, t0, o.total, o.timeoutMs, () => (firstSeen = nowMs()));
      const requests = server.requests;
      // A response still being written when the iteration showed counts up to its end (it was needed).
      const bytesToFirst = wireUntil(requests, fromWire, Math.max(r.firstAt, firstSeen));
      out.push({
        preset,
        kind,
        firstS: (r.firstAt - t0) / 1000,
        tenthS: r.tenthAt === null ? null : (r.tenthAt - t0) / 1000,
        steadyItPerS: r.steady,
        bytesToFirst,
        files: filesBetween(requests, from, r.firstAt),
        engine: (await page.getByTestId('train-status').getAttribute('data-engine')) ?? '',
        phases: phases(await marks(page), t0, r.firstAt, requests),
        errors: [...errors],
        isolated: (await page.evaluate('self.crossOriginIsolated')) === true,
        cores: Number(await page.evaluate('navigator.hardwareConcurrency')),
      });
    }
  } finally {
    await context.close();
  }
  return out;
}

/** `npm run train` on `preset`: seconds from spawn to the lines of iteration 0, 9 and the last. */
function cliRun(preset: string, total: number, timeoutMs: number): Promise<CliTrial> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-tab-'));
  return new Promise<CliTrial>((resolve, reject) => {
    const t0 = nowMs();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/train.ts', '--config', preset, '--iterations', String(total), '--out', dir, '--checkpoint-every', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const seen = new Map<number, number>();
    let buf = '';
    let err = '';
    const timer = setTimeout(() => child.kill(), timeoutMs);
    child.stdout.on('data', (d: Buffer) => {
      const at = nowMs();
      buf += d.toString('utf8');
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) {
        const m = /^it\s+(\d+)\s/.exec(l);
        if (m && !seen.has(Number(m[1]))) seen.set(Number(m[1]), at);
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    child.on('close', (code) => {
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      const first = seen.get(0);
      if (code !== 0 || first === undefined) return reject(new Error(`tab: the CLI on ${preset} exited ${code}: ${err.slice(-2000)}`));
      const tenth = seen.get(9) ?? null;
      const lastIt = Math.max(...seen.keys());
      const last = seen.get(lastIt)!;
      resolve({
        preset,
        firstS: (first - t0) / 1000,
        tenthS: tenth === null ? null : (tenth - t0) / 1000,
        steadyItPerS: tenth !== null && lastIt > 9 ? ((lastIt - 9) * 1000) / (last - tenth) : null,
      });
    });
  });
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const medianOrNull = (xs: readonly (number | null)[]) => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? sig(median(v), 3) : null;
};

export async function runTab(o: SuiteOptions): Promise<SuiteResult> {
  // 'tools' stands for every tool preset in presets/ (toolPresets()).
  const presets = typeof o.flags.presets === 'string' ? o.flags.presets.split(',').flatMap((p) => (p === 'tools' ? toolPresets() : [p])) : DEFAULT_PRESETS;
  if (presets.length === 0) throw new UsageError('--presets: no presets (presets/ has no tool preset?)');
  const rounds = o.quick ? 1 : Number(o.flags.rounds ?? 2);
  if (!Number.isInteger(rounds) || rounds < 1) throw new UsageError(`--rounds: a whole number ≥ 1, got ${o.flags.rounds}`);
  const total = Number(o.flags.iterations ?? (o.quick ? 12 : 40));
  if (!Number.isInteger(total) || total < 1) throw new UsageError(`--iterations: a whole number ≥ 1, got ${o.flags.iterations}`);
  const idleMs = Number(o.flags['idle-s'] ?? 2) * 1000;
  const precompressed = o.flags.precompressed !== 'off';
  // A tool preset that trains its warm start in the tab takes minutes before its first iteration on a busy machine.
  const timeoutMs = Number(o.flags['timeout-s'] ?? 600) * 1000;
  if (!(timeoutMs > 0)) throw new UsageError(`--timeout-s: seconds > 0, got ${o.flags['timeout-s']}`);
  const withCli = o.flags.cli !== 'off';
  const warmStartCache = o.flags['warm-start-cache'] !== 'off';
  let dist = typeof o.flags.dist === 'string' ? o.flags.dist : 'dist';
  if (dist !== 'dist' && !existsSync(join(dist, 'index.html'))) throw new UsageError(`--dist ${dist}: no built app there (index.html)`);
  if (dist === 'dist' && (o.flags.build !== 'skip' || !existsSync('dist/index.html'))) {
    o.progress('tab: building the app (vite build, production)');
    try {
      execSync('npx vite build --logLevel error', { stdio: 'pipe', env: { ...process.env, NODE_ENV: 'production' } });
    } catch (e) {
      throw new Error(`tab: the build failed: ${String((e as { stderr?: Buffer }).stderr ?? e).slice(-4000)}`, { cause: e });
    }
  }
  // --warm-start-cache off: the same build without its shipped warm starts (each run trains its own).
  let bare: string | null = null;
  if (!warmStartCache) {
    bare = mkdtempSync(join(tmpdir(), 'bench-tab-dist-'));
    cpSync(dist, bare, { recursive: true, filter: (src) => !src.includes('/warm-start') });
    dist = bare;
  }
  const load0 = loadavg()[0];
  const server = await serveStatic(dist, '/playground/', true, {}, { precompressed, record: true });
  const browser = await launch();
  const tab: TabTrial[] = [];
  const cli: CliTrial[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      for (const [i, preset] of presets.entries()) {
        // Tab and CLI alternate which goes first, round by round, so neither always meets a warmer machine.
        const tabFirst = (r + i) % 2 === 0;
        const doCli = async () => {
          if (!withCli) return;
          o.progress(`tab: CLI on ${preset} (round ${r + 1}/${rounds})`);
          cli.push(await cliRun(preset, total, timeoutMs));
        };
        if (!tabFirst) await doCli();
        o.progress(`tab: ${preset} in a fresh tab (round ${r + 1}/${rounds})`);
        tab.push(...(await tabRun(browser, server, preset, { total, idleMs, timeoutMs, second: i === 0, progress: o.progress })));
        if (tabFirst) await doCli();
      }
    }
  } finally {
    await browser.close();
    await server.close();
    if (bare) rmSync(bare, { recursive: true, force: true });
  }
  const load1 = loadavg()[0];

  const rows = [...presets.flatMap((p) => [[p, 'fresh'] as const, ...(p === presets[0] ? [[p, 'second'] as const] : [])])].map(([p, kind]) => {
    const t = tab.filter((x) => x.preset === p && x.kind === kind);
    const c = cli.filter((x) => x.preset === p);
    const firstS = medianOrNull(t.map((x) => x.firstS))!;
    const cliFirstS = medianOrNull(c.map((x) => x.firstS));
    return {
      preset: p,
      start: kind,
      first_iteration_s: firstS,
      tenth_iteration_s: medianOrNull(t.map((x) => x.tenthS)),
      steady_it_per_s: medianOrNull(t.map((x) => x.steadyItPerS)),
      cli_first_iteration_s: cliFirstS,
      cli_tenth_iteration_s: medianOrNull(c.map((x) => x.tenthS)),
      cli_steady_it_per_s: medianOrNull(c.map((x) => x.steadyItPerS)),
      ratio_first: cliFirstS === null ? null : sig(firstS / cliFirstS, 3),
      isolated: t.every((x) => x.isolated),
      cores: t[0]?.cores ?? null,
      bytes_to_first_iteration: medianOrNull(t.map((x) => x.bytesToFirst)),
      phases: Object.fromEntries(Object.keys(t[0]?.phases ?? {}).map((k) => [k, medianOrNull(t.map((x) => (Number.isFinite(x.phases[k]) ? x.phases[k] : null)))])),
    };
  });
  o.print(
    table(
      ['preset', 'start', 'tab 1st s', 'tab 10th s', 'tab it/s', 'CLI 1st s', 'CLI 10th s', 'CLI it/s', 'tab/CLI', 'MB to 1st'],
      rows.map((x) => [x.preset, x.start, x.first_iteration_s, x.tenth_iteration_s ?? '-', x.steady_it_per_s ?? '-', x.cli_first_iteration_s ?? '-', x.cli_tenth_iteration_s ?? '-', x.cli_steady_it_per_s ?? '-', x.ratio_first ?? '-', sig((x.bytes_to_first_iteration ?? 0) / 1e6, 3)]),
    ),
  );
  const phaseNames = [...new Set(rows.flatMap((x) => Object.keys(x.phases)))];
  o.print('\nwhere the first iteration goes (s after Start at which each phase ended; medians):');
  o.print(table(['preset', 'start', ...phaseNames], rows.map((x) => [x.preset, x.start, ...phaseNames.map((k) => x.phases[k] ?? '-')])));
  const firstFresh = tab.find((x) => x.kind === 'fresh');
  if (firstFresh) {
    o.print(`\nfiles sent before the first iteration (${presets[0]}, fresh tab, round 1; body bytes):`);
    o.print(table(['file', 'encoding', 'KB'], firstFresh.files.slice(0, 12).map((f) => [f.path, f.encoding || 'identity', Math.round(f.bytes / 1000)])));
  }
  const errors = tab.flatMap((x) => x.errors);
  if (errors.length) o.print(`\npage errors: ${errors.slice(0, 5).join(' | ')}`);
  const machine = { cpus: availableParallelism(), loadavg1m: load0, loadavg1mEnd: load1 };
  o.print(`\nmachine: ${machine.cpus} cores, load ${load0.toFixed(2)} -> ${load1.toFixed(2)}; ${rounds} round(s), medians; idle ${idleMs / 1000} s before Start; precompressed ${precompressed ? 'on' : 'off'}; app from ${dist}`);
  const head = rows[0];
  // Tool presets: the first RL iteration and the warm start's end after Start (fresh tab).
  const toolRows = rows.filter((x) => x.start === 'fresh' && toolPresets().includes(x.preset));
  const tools = toolRows.map((x) => ({ preset: x.preset, first_iteration_s: x.first_iteration_s, warm_start_end_s: x.phases.warm_start_end ?? null, warm_start_loaded: x.phases.warm_start_loaded === 1, threads: x.phases.threads ?? null, isolated: x.isolated }));
  if (tools.length) o.print(`\ntool presets, fresh tab (s after Start): ${tools.map((t) => `${t.preset} first RL iteration ${t.first_iteration_s}, warm start ended ${t.warm_start_end_s ?? '-'}${t.warm_start_loaded ? ' (shipped, loaded)' : ''}, ${t.threads ?? '?'} thread(s), isolated ${t.isolated}`).join('; ')}`);
  return {
    suite: 'tab',
    quick: o.quick,
    first_iteration_s: head.first_iteration_s,
    tool_first_iteration_s: tools.length ? Math.min(...tools.map((t) => t.first_iteration_s)) : null,
    tools,
    warm_start_cache: warmStartCache,
    cli_first_iteration_s: head.cli_first_iteration_s,
    bytes_to_first_iteration: head.bytes_to_first_iteration,
    preset: presets[0],
    precompressed,
    dist,
    idle_s: idleMs / 1000,
    rounds,
    iterations: total,
    rows,
    trials: { tab, cli },
    errors,
    machine,
  };
}
