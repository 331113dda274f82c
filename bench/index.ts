/**
 * `npm run bench -- [suite] [--json] [--quick] [--<flag> value ...]`
 *
 * Runs one suite, or every suite when none is named. Human-readable tables go to stdout,
 * progress to stderr. With --json the last line of stdout is exactly one JSON object: the
 * suite's result when one suite ran, `{"suites": [...]}` when several did.
 */
import { parseArgs } from './lib/args.ts';
import { UsageError } from './lib/suite.ts';
import type { Suite, SuiteResult } from './lib/suite.ts';
import { runGemm } from './gemm/suite.ts';
import { runTrainStep } from './train-step/suite.ts';
import { runLearn } from './learn/suite.ts';
import { runThreads } from './threads/suite.ts';
import { runSoak } from './soak/suite.ts';
import { runServe } from './serve/suite.ts';
import { runTab } from './tab/suite.ts';
import { runSweepBench } from './sweep/suite.ts';
import { runPairs } from './pairs/suite.ts';
import { runEnvStudio } from './env-studio/suite.ts';
import { runMapExpert } from './map-expert/suite.ts';
import { runAgentic } from './agentic/suite.ts';

export const SUITES: Record<string, Suite> = {
  'train-step': {
    description: 'ms per train step (fwd+PPO loss+bwd+Adam), batch 64: ours (ort-web wasm) vs tfjs, jax-js, ort-node',
    flags: {
      models: 'comma-separated subset of mlp-76k, transformer-1m',
      impls: 'comma-separated subset of ort-web-wasm, tfjs-wasm, jax-js-wasm, ort-node; opt-in: tfjs-wasm-stock',
      rounds: 'timed rounds per model (overrides the preset)',
      warmup: 'untimed warmup rounds per model (overrides the preset)',
    },
    run: runTrainStep,
  },
  learn: {
    description: 'time to a target success rate per preset (headless, ort-web wasm), sync vs async token training on flaky-api, 1 vs 2 rollout workers',
    flags: {
      presets: 'comma-separated subset of grid-empty-8x8-grpo, grid-door-key-ppo, calc-grpo, kv-lookup-grpo, memory-grpo',
      budget: 'seconds per preset (overrides the targets\' budgets)',
      eval: 'held-out seeds scored after a warm start and after RL, for presets that warm-start (default 512, --quick 32; 0 = skip)',
      parts: 'comma-separated subset of learn, async, pool (default all)',
      cache: 'directory keeping the flaky-api warm start between runs (the async part)',
      engine: 'ort-web-wasm (default: as in the browser) or ort-node (native, the CLI option)',
    },
    run: runLearn,
  },
  agentic: {
    description: 'what RL adds to imitation on the tool envs: per discovery preset and seed, held-out success (greedy, sampled) and the behaviour metric after the warm start and after RL, and wall time',
    flags: {
      presets: 'comma-separated preset ids or config files: flaky-stop-discovery, kv-gather-discovery and flaky-stop-constrained (default), bench/agentic/flaky-retry-rare-failures.json (a measured attempt), calc-grpo (contrast: sharpening)',
      seeds: 'seeds 1..N per preset (default 3; --quick 1)',
      eval: 'held-out seeds scored before and after RL (default 128; --quick 16)',
      iterations: "RL iterations (default: the preset's; --quick 2)",
      engine: 'ort-web-wasm (default: as in the browser) or ort-node',
    },
    run: runAgentic,
  },
  threads: {
    description: 'onnxruntime-web WASM at 1, 2, 4 threads on one preset per model family (the evidence for the learner thread rule)',
    flags: {
      threads: 'comma-separated thread counts (default 1,2,4)',
      presets: 'comma-separated preset ids (default grid-empty-8x8-grpo,calc-grpo)',
      rounds: 'rounds, thread counts alternating (default 3)',
    },
    run: runThreads,
  },
  serve: {
    description: 'npm run serve under load: concurrent sessions (OpenEnv WebSocket and HTTP) step a tool env; p50/p99 step latency, steps/s, no session lost or crossed',
    flags: {
      sessions: 'concurrent sessions per protocol (default 256)',
      episodes: 'expert episodes per session (default 8, --quick 2)',
      env: 'tool env to serve (default tools/calculator)',
      latency: 'skip (default: measure the server) or real (wait out simulated tool latency)',
      protocols: 'comma-separated subset of ws, http (default both)',
    },
    run: runServe,
  },
  soak: {
    description: 'memory over long runs: 10k grid iterations headless, each rollout setup (in-thread, 1 and 2 workers, token worker), and minutes of training in Chromium with storage on; flat = no growth',
    flags: {
      scale: 'multiplies every setup\'s iterations (default 1; --quick 0.2)',
      'browser-minutes': 'minutes of training in Chromium with storage on (default 10; --quick 1; 0 skips it)',
    },
    run: runSoak,
  },
  sweep: {
    description: 'npm run sweep N at a time against one after another on this machine: both wall times, the speedup, and the per-config IQM',
    flags: {
      config: 'preset id or config file (default grid-empty-8x8-grpo)',
      seeds: 'seeds (default 1-4; --quick 1-2)',
      set: 'the field and its values (default algo.lr=1e-3,3e-3)',
      iterations: 'iterations per run (default: the config\'s; --quick 5)',
      parallel: 'runs at a time in the parallel sweep (default: the cores, at least 2)',
    },
    run: runSweepBench,
  },
  pairs: {
    description: 'every registered algorithm on a grid env (MLP) and a tool env (transformer), 3 seeds each through npm run sweep: docs/algorithms.md\'s algorithm × family table',
    flags: {
      seeds: 'seeds per pair (default 1-3; --quick 1)',
      targets: 'comma-separated subset of grid-mlp, tool (default both)',
      algos: 'comma-separated subset of the registered algorithms (default all)',
      with: 'PATH=VALUE, one more config field for every pair, e.g. algo.covariance.mode=clip-cov',
      parallel: 'runs at a time (default: the cores)',
    },
    run: runPairs,
  },
  tab: {
    description: 'the first minute in the built app (Chromium): Start to the 1st and 10th iteration (tool presets: and to the warm start\'s end), steady it/s, bytes to the 1st iteration, vs the CLI on the same presets',
    flags: {
      presets: 'comma-separated preset ids, "tools" = every tool preset in presets/ (default grid-empty-8x8-grpo,grid-door-key-ppo,calc-grpo; the first also gets a second Start in its tab)',
      rounds: 'fresh tabs per preset (default 2; --quick 1); medians reported',
      iterations: 'iterations per run (default 40; --quick 12; the 10th iteration and steady it/s need ≥ 11)',
      cli: 'on (default) or off: also time npm run train on each preset',
      'warm-start-cache': 'on (default) or off: serve the build without public/warm-start/ (tool presets then train their warm start in the tab)',
      'timeout-s': 'seconds to wait for each run\'s first iteration, and again for its last (default 600)',
      'idle-s': 'seconds the page sits loaded before Start is pressed (default 2)',
      precompressed: 'on (default) or off: serve the .br/.gz files the build writes',
      build: 'skip: use the dist/ already built',
      dist: 'serve this built app instead of building dist/ (e.g. an older build, for before/after)',
    },
    run: runTab,
  },
  'env-studio': {
    description: 'env steps/s: grid/empty-8x8 built in vs its port as a code env (examples/envs/empty-room.js) stepped as training steps it (V8 sandbox, batched), one run; ratio = code ÷ built-in',
    flags: { slots: 'envs stepped in lockstep (default 64: the grid-empty-8x8-grpo preset\'s 8 groups × 8)' },
    run: runEnvStudio,
  },
  'map-expert': {
    description: 'ms per expert plan and per studio check on a 25×25 map with a key and 4 locked doors (grid/custom plans with the map solver)',
    flags: { full: 'also time one plan by the full-state search it replaced (seconds)', serve: 'also serve the map and time GET /state after off-plan steps' },
    run: runMapExpert,
  },
  gemm: {
    description: 'one MatMul at the train-step models\' dominant shapes per runtime: the kernel floor under the ratios',
    flags: {},
    run: runGemm,
  },
};

function suiteList(): string {
  return Object.entries(SUITES)
    .map(([name, s]) => `  ${name.padEnd(12)} ${s.description}`)
    .join('\n');
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    const flagHelp = Object.entries(SUITES)
      .map(([name, s]) => `${name} flags:\n${Object.entries(s.flags).map(([f, h]) => `  --${f.padEnd(8)} ${h}`).join('\n')}`)
      .join('\n');
    console.log(`usage: npm run bench -- [suite] [--json] [--quick] [flags]\n\nsuites:\n${suiteList()}\n\n${flagHelp}`);
    return 0;
  }
  const unknown = args.suites.filter((s) => !(s in SUITES));
  if (unknown.length > 0) {
    console.error(`bench: unknown suite ${unknown.map((s) => `'${s}'`).join(', ')}. Known suites:\n${suiteList()}`);
    return 1;
  }
  const names = args.suites.length > 0 ? args.suites : Object.keys(SUITES);
  const accepted = new Set(names.flatMap((n) => Object.keys(SUITES[n].flags)));
  const badFlags = Object.keys(args.flags).filter((f) => !accepted.has(f));
  if (badFlags.length > 0) {
    throw new UsageError(`unknown flag ${badFlags.map((f) => `--${f}`).join(', ')} (accepted here: --json, --quick${[...accepted].map((f) => `, --${f}`).join('')})`);
  }
  const results: SuiteResult[] = [];
  for (const name of names) {
    console.log(`== ${name}${args.quick ? ' (quick)' : ''}`);
    results.push(
      await SUITES[name].run({
        quick: args.quick,
        flags: args.flags,
        print: (text) => console.log(text),
        progress: (text) => console.error(text),
      }),
    );
  }
  if (args.json) console.log(JSON.stringify(results.length === 1 ? results[0] : { suites: results }));
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    const text = e instanceof UsageError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e);
    console.error(`bench: ${text}`);
    process.exit(1);
  },
);
