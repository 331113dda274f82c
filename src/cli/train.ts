/**
 * npm run train -- --config <preset id | file.json> [--seed N] [--iterations N] [--out DIR] [--engine ort-web-wasm|ort-node|auto] [--reward FILE]
 *
 * Trains headless with the same core as the browser. Writes into DIR:
 *   config.json        the fully resolved configuration (defaults filled in)
 *   metrics.jsonl      one JSON object per iteration, the metric keys of ARCHITECTURE.md
 *   trajectories.jsonl sampled episodes (actions, log-probs, rewards, versions)
 *   policy.onnx        the trained policy, weights baked in, loadable by any ONNX runtime
 */
import { appendFileSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { exportPolicyOnnx } from '../core/models/export.ts';
import { heldOutSeeds } from '../core/util/rng.ts';
import { createTrainer } from '../core/trainer/createTrainer.ts';
import { runTraining, TrainerEvents } from '../core/trainer/events.ts';
import type { StepEpisode } from '../core/rollout/stepEpisode.ts';
import type { TokenEpisode } from '../core/rollout/tokenEpisode.ts';
import { chooseNodeEngine, loadNodeEngine, type NodeEngineName } from '../runtime/engine/node.ts';
import { summarize } from '../core/engine/choose.ts';
import { makeEnv } from '../core/envs/index.ts';
import { envKwargsText } from '../core/envs/kwargDocs.ts';
import type { Engine } from '../core/engine/types.ts';
import { createNodeWorkerPool } from '../runtime/pool/node.ts';
import { nodeTokenWorkerOn } from '../runtime/tokenWorker/node.ts';
import { intArg, parseCli, UsageError } from './args.ts';
import { loadRunConfig, presetIds } from './presets.ts';
import { withRewardFile } from './reward.ts';
import { rewardLabFor } from '../runtime/rewardSandbox/index.ts';

const USAGE = `usage: npm run train -- --config <preset id | file.json> [--seed N] [--iterations N] [--out DIR] [--engine ort-web-wasm|ort-node|auto] [--trajectories N] [--eval N] [--reward FILE] [--force]
  --reward FILE   user reward terms: an ES module whose named exports (step) => number are added to each step's reward, run sandboxed (QuickJS); stored in config.json
  --force   write into an --out folder that already holds a run (its files are replaced)
  --engine auto   time a few train steps of this run's model on ort-web-wasm and on ort-node (≤ 1.5 s), train on the faster
  --eval N   before RL (after any warm start) and at the end, play N held-out seeds greedily and by sampling; writes eval.json (rates) and eval-episodes.jsonl (every episode)
exit status: 0 done; 1 an invalid config (every problem listed), or a failed run (an error, or 5 iterations in a row whose updates were all skipped as non-finite: the outputs hold the last good weights); 2 bad command-line usage; 130 interrupted by Ctrl-C after writing the outputs
presets: ${presetIds().join(', ')}`;

function fmt(x: number | undefined, digits = 3): string {
  return x === undefined || Number.isNaN(x) ? '-' : x.toFixed(digits);
}

/** One sampled episode for trajectories.jsonl: exactly what the learner saw (TITO for tokens). */
function trajectoryLine(iteration: number, ep: StepEpisode | TokenEpisode, reward: number, advantage: number): string {
  const common = {
    iteration,
    env: ep.envId,
    seed: ep.seed,
    group: ep.group,
    reward,
    advantage,
    env_rewards: Array.from(ep.rewards),
    terminated: ep.terminated,
    truncated: ep.truncated,
    success: ep.success,
  };
  const round = (x: number) => Number(x.toFixed(6));
  if ('tokens' in ep) {
    return JSON.stringify({
      ...common,
      tokens: Array.from(ep.tokens),
      loss_mask: Array.from(ep.lossMask),
      logprobs: Array.from(ep.logprobs, round),
      versions: Array.from(ep.versions),
      actions: ep.actions,
      transcript: ep.transcript,
    });
  }
  return JSON.stringify({
    ...common,
    actions: Array.from(ep.actions),
    logprobs: Array.from(ep.logprobs, round),
    versions: Array.from(ep.versions),
  });
}

/** Most held-out seeds --eval plays (each is two episodes kept in memory: greedy and sampled). */
const MAX_EVAL_EPISODES = 100_000;

/** What a run writes into its --out folder: finding any of them there means a run lives there. */
const RUN_FILES = ['config.json', 'metrics.jsonl', 'trajectories.jsonl', 'policy.onnx', 'eval.json', 'eval-episodes.jsonl'];

/**
 * Makes sure `out` can take this run's files before anything trains: refuses a folder that
 * already holds a run (unless `force`), creates missing folders, and writes a probe file, so an
 * unwritable path fails at once with its reason.
 */
export function prepareOut(out: string, force: boolean): void {
  const abs = resolve(out);
  try {
    if (existsSync(abs)) {
      if (!statSync(abs).isDirectory()) throw new Error('it exists and is not a folder');
      const taken = RUN_FILES.filter((f) => existsSync(join(abs, f)));
      if (taken.length > 0 && !force) throw new UsageError(`--out ${out} already holds a run (${taken.join(', ')}): pass --force to overwrite it, or choose another folder`);
    } else {
      // mkdir -p one level at a time: Node's recursive mkdir never returns on some special file
      // systems (--out /proc/x hung), while a plain mkdir fails at once with the reason.
      const missing: string[] = [];
      for (let p = abs; !existsSync(p); p = dirname(p)) missing.unshift(p);
      for (const dir of missing) mkdirSync(dir);
    }
    const probe = join(abs, `.write-test-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`cannot write the run to --out ${out}: ${(e as Error).message}`);
  }
}

/** Exit status after Ctrl-C (the shell convention 128 + SIGINT): outputs were written. */
export const EXIT_INTERRUPTED = 130;

export async function main(argv: string[]): Promise<number> {
  const { values } = parseCli(
    argv,
    {
      config: { type: 'string' },
      seed: { type: 'string' },
      iterations: { type: 'string' },
      out: { type: 'string' },
      engine: { type: 'string', default: 'ort-web-wasm' },
      trajectories: { type: 'string', default: '4' },
      eval: { type: 'string', default: '0' },
      quiet: { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
      reward: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (values.help) {
    console.log(`${USAGE}\nenv kwargs (config env.kwargs), default (accepted):\n${envKwargsText()}`);
    return 0;
  }
  if (!values.config) throw new UsageError(`--config is required\n\n${USAGE}`);
  if (values.engine !== 'ort-web-wasm' && values.engine !== 'ort-node' && values.engine !== 'auto') throw new UsageError(`--engine must be ort-web-wasm, ort-node or auto, got ${values.engine}`);
  let config = loadRunConfig(values.config);
  if (values.reward !== undefined) config = withRewardFile(config, values.reward);
  config.seed = intArg(values.seed, 'seed') ?? config.seed;
  config.iterations = intArg(values.iterations, 'iterations', 1) ?? config.iterations;
  const keepTraj = intArg(values.trajectories, 'trajectories', 0, 100_000) ?? 4;
  const evalN = intArg(values.eval, 'eval', 0, MAX_EVAL_EPISODES) ?? 0;
  const out = values.out ?? join('runs', `${config.id}-seed${config.seed}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  prepareOut(out, values.force);
  writeFileSync(join(out, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  const metricsPath = join(out, 'metrics.jsonl');
  const trajPath = join(out, 'trajectories.jsonl');
  writeFileSync(metricsPath, '');
  writeFileSync(trajPath, '');

  // A reward module that does not load, or whose terms throw or loop on a dry run, stops here, before training.
  const rewardLab = await rewardLabFor(config, (m) => console.warn(`warning: ${m}`));
  let engine: Engine;
  if (values.engine === 'auto') {
    const { engine: chosen, decision } = await chooseNodeEngine(config);
    engine = chosen;
    console.log(`engine auto: ${summarize(decision)}; using ${engine.name} (${decision.reason})`);
  } else engine = await loadNodeEngine(values.engine as NodeEngineName);
  const trainer = await createTrainer(config, engine, {
    rewardLab,
    workerPool: (size) => (model, weights) => createNodeWorkerPool({ size, model, weights }),
    tokenWorker: nodeTokenWorkerOn(engine.name as NodeEngineName),
    onWarmStart: (r, total) => {
      if (!values.quiet && (r.step % 50 === 0 || r.step === total - 1)) {
        console.log(`warm start ${String(r.step + 1).padStart(5)}/${total}  ${r.wallS.toFixed(1).padStart(6)}s  ce ${r.ceLoss.toFixed(3)}  p(expert token) ${r.targetProb.toFixed(3)}`);
      }
    },
  });
  const sched = config.rollout.mode === 'async' ? `async, staleness ≤ ${config.rollout.maxStaleness}` : 'sync';
  const pool = config.rollout.workers > 0 ? `${config.rollout.workers} rollout workers` : 'in-thread rollouts';
  console.log(`training ${config.id} (${makeEnv(config.env.id, config.env.kwargs).spec.title} [${config.env.id}], ${config.algo.algo}; ${sched}, ${pool}) on ${engine.name} for ${config.iterations} iterations -> ${out}`);
  const heldOut = heldOutSeeds(evalN);
  const evalEpisodesPath = join(out, 'eval-episodes.jsonl');
  if (evalN > 0) writeFileSync(evalEpisodesPath, '');
  const evaluate = async (when: string) => {
    const greedy = await trainer.evaluate(heldOut, 0);
    const sampled = await trainer.evaluate(heldOut, 1);
    // Every held-out episode, so failures can be read (which digit, which hop) and runs diffed.
    const lines = [...greedy.map((e) => ({ e, temperature: 0 })), ...sampled.map((e) => ({ e, temperature: 1 }))].map(({ e, temperature }) =>
      JSON.stringify({ when, temperature, seed: e.seed, success: e.success, return: Number(Array.from(e.rewards).reduce((a, b) => a + b, 0).toFixed(6)), actions: Array.from(e.actions as ArrayLike<string | number>), transcript: 'transcript' in e ? e.transcript : undefined }),
    );
    appendFileSync(evalEpisodesPath, lines.join('\n') + '\n');
    const rate = (eps: readonly { success: boolean }[]) => eps.filter((e) => e.success).length / Math.max(1, eps.length);
    const r = { when, episodes: evalN, greedy_success: rate(greedy), sampled_success: rate(sampled) };
    console.log(`eval (${when}, ${evalN} held-out seeds): greedy success ${r.greedy_success.toFixed(3)}, sampled ${r.sampled_success.toFixed(3)}`);
    return r;
  };
  const evals = evalN > 0 ? [await evaluate('before RL')] : [];
  const t0 = performance.now();
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
    console.log('\ninterrupted: finishing this iteration and writing outputs (Ctrl-C again to quit at once)');
    process.once('SIGINT', () => process.exit(EXIT_INTERRUPTED));
  };
  process.once('SIGINT', onSigint);
  const events = new TrainerEvents();
  events.on('iteration', (e) => {
    const m = e.metrics;
    const elapsed = (performance.now() - t0) / 1000;
    appendFileSync(metricsPath, JSON.stringify({ iteration: e.iteration, wall_s: Number(elapsed.toFixed(3)), ...m }) + '\n');
    if (!values.quiet) {
      console.log(
        `it ${String(e.iteration).padStart(4)}  ${elapsed.toFixed(1).padStart(6)}s  success ${fmt(m['episode/success_rate'], 2)}  reward ${fmt(m['reward/mean'])}  len ${fmt(m['episode/length_mean'], 1)}  entropy ${fmt(m['actor/entropy'])}  zero-std ${fmt(m['groups/frac_zero_std'], 2)}${e.allApplied ? '' : '  [NaN guard skipped an update]'}`,
      );
    }
  });
  events.on('trajectories', (e) => {
    for (const s of e.episodes) appendFileSync(trajPath, trajectoryLine(e.iteration, s.episode, s.reward, s.advantage) + '\n');
  });
  events.on('error', (e) => console.error(`error in iteration ${e.iteration}: ${e.message}`));
  let stopped;
  try {
    stopped = await runTraining(trainer, events, { iterations: config.iterations, stopAtSuccess: config.stopAtSuccess, trajectories: keepTraj, shouldStop: () => interrupted });
    if (stopped.reason === 'success') console.log(`success ≥ ${config.stopAtSuccess} over the last 3 iterations: stopping`);
    if (evalN > 0 && stopped.reason !== 'error') {
      evals.push(await evaluate('after RL'));
      writeFileSync(join(out, 'eval.json'), JSON.stringify(evals, null, 2) + '\n');
    }
  } finally {
    process.off('SIGINT', onSigint);
    const weights = await trainer.getWeights();
    // Token policies export the KV-cache decode graph (one token per call), what a rollout runs.
    const graph = trainer.model.kind === 'transformer' ? 'decode' : 'full';
    writeFileSync(join(out, 'policy.onnx'), exportPolicyOnnx(trainer.model, weights, { batch: 1, graph }));
    await trainer.release();
    rewardLab?.scorer.close();
  }
  const iterations = stopped.iterations;
  if (stopped.reason === 'error') {
    console.error(`stopped after ${iterations} iterations; wrote config.json, metrics.jsonl, trajectories.jsonl, policy.onnx (the last good weights) to ${out}`);
    return 1;
  }
  if (stopped.reason === 'requested') {
    console.log(`interrupted at iteration ${iterations}; wrote config.json, metrics.jsonl, trajectories.jsonl, policy.onnx to ${out}`);
    return EXIT_INTERRUPTED;
  }
  console.log(`done: ${iterations} iterations in ${((performance.now() - t0) / 1000).toFixed(1)} s; wrote config.json, metrics.jsonl, trajectories.jsonl, policy.onnx to ${out}`);
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(e instanceof UsageError ? e.message : `error: ${(e as Error).message}`);
      process.exit(e instanceof UsageError ? 2 : 1);
    },
  );
}
