/**
 * npm run train -- --config <preset id | file.json> [--seed N] [--iterations N] [--out DIR] [--engine ort-web-wasm|ort-node]
 *
 * Trains headless with the same core as the browser. Writes into DIR:
 *   config.json        the fully resolved configuration (defaults filled in)
 *   metrics.jsonl      one JSON object per iteration, DESIGN §7 keys
 *   trajectories.jsonl sampled episodes (actions, log-probs, rewards, versions)
 *   policy.onnx        the trained policy, weights baked in, loadable by any ONNX runtime
 */
import { mkdirSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportPolicyOnnx } from '../core/models/export.ts';
import { createTrainer } from '../core/trainer/run.ts';
import type { StepEpisode } from '../core/trainer/stepEpisode.ts';
import { loadNodeEngine, type NodeEngineName } from '../runtime/engine/node.ts';
import { createNodeWorkerPool } from '../runtime/pool/node.ts';
import { intArg, parseCli, UsageError } from './args.ts';
import { loadRunConfig, presetIds } from './presets.ts';

const USAGE = `usage: npm run train -- --config <preset id | file.json> [--seed N] [--iterations N] [--out DIR] [--engine ort-web-wasm|ort-node] [--trajectories N]
presets: ${presetIds().join(', ')}`;

function fmt(x: number | undefined, digits = 3): string {
  return x === undefined || Number.isNaN(x) ? '-' : x.toFixed(digits);
}

function trajectoryLine(iteration: number, ep: StepEpisode, reward: number, advantage: number): string {
  return JSON.stringify({
    iteration,
    env: ep.envId,
    seed: ep.seed,
    group: ep.group,
    actions: Array.from(ep.actions),
    logprobs: Array.from(ep.logprobs, (x: number) => Number(x.toFixed(6))),
    versions: Array.from(ep.versions),
    env_rewards: Array.from(ep.rewards),
    reward,
    advantage,
    terminated: ep.terminated,
    truncated: ep.truncated,
    success: ep.success,
  });
}

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
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.config) throw new UsageError(`--config is required\n\n${USAGE}`);
  if (values.engine !== 'ort-web-wasm' && values.engine !== 'ort-node') throw new UsageError(`--engine must be ort-web-wasm or ort-node, got ${values.engine}`);
  const config = loadRunConfig(values.config);
  config.seed = intArg(values.seed, 'seed') ?? config.seed;
  config.iterations = intArg(values.iterations, 'iterations', 1) ?? config.iterations;
  const keepTraj = intArg(values.trajectories, 'trajectories') ?? 4;
  const out = values.out ?? join('runs', `${config.id}-seed${config.seed}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  const metricsPath = join(out, 'metrics.jsonl');
  const trajPath = join(out, 'trajectories.jsonl');
  writeFileSync(metricsPath, '');
  writeFileSync(trajPath, '');

  const engine = await loadNodeEngine(values.engine as NodeEngineName);
  const trainer = await createTrainer(config, engine, {
    workerPool: (size) => (model, weights) => createNodeWorkerPool({ size, model, weights }),
  });
  const sched = config.rollout.mode === 'async' ? `async, staleness ≤ ${config.rollout.maxStaleness}` : 'sync';
  const pool = config.rollout.workers > 0 ? `${config.rollout.workers} rollout workers` : 'in-thread rollouts';
  console.log(`training ${config.id} (${config.env.id}, ${config.algo.algo}; ${sched}, ${pool}) on ${engine.name} for ${config.iterations} iterations -> ${out}`);
  const t0 = performance.now();
  const recent: number[] = [];
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
    console.log('\ninterrupted: finishing this iteration and writing outputs');
  };
  process.once('SIGINT', onSigint);
  let iterations = 0;
  try {
    for (let i = 0; i < config.iterations && !interrupted; i++) {
      const r = await trainer.step();
      iterations++;
      const m = r.metrics;
      const elapsed = (performance.now() - t0) / 1000;
      appendFileSync(metricsPath, JSON.stringify({ iteration: r.iteration, wall_s: Number(elapsed.toFixed(3)), ...m }) + '\n');
      for (let k = 0; k < Math.min(keepTraj, r.episodes.length); k++) {
        appendFileSync(trajPath, trajectoryLine(r.iteration, r.episodes[k], r.episodeRewards[k], r.episodeAdvantages[k]) + '\n');
      }
      if (!values.quiet) {
        console.log(
          `it ${String(r.iteration).padStart(4)}  ${elapsed.toFixed(1).padStart(6)}s  success ${fmt(m['episode/success_rate'], 2)}  reward ${fmt(m['reward/mean'])}  len ${fmt(m['episode/length_mean'], 1)}  entropy ${fmt(m['actor/entropy'])}  zero-std ${fmt(m['groups/frac_zero_std'], 2)}${r.allApplied ? '' : '  [NaN guard skipped an update]'}`,
        );
      }
      recent.push(m['episode/success_rate'] ?? 0);
      if (recent.length > 3) recent.shift();
      if (config.stopAtSuccess !== null && recent.length === 3 && recent.reduce((a, b) => a + b) / 3 >= config.stopAtSuccess) {
        console.log(`success ${fmt(recent.reduce((a, b) => a + b) / 3, 2)} ≥ ${config.stopAtSuccess} over the last 3 iterations: stopping`);
        break;
      }
    }
  } finally {
    process.off('SIGINT', onSigint);
    const weights = await trainer.getWeights();
    writeFileSync(join(out, 'policy.onnx'), exportPolicyOnnx(trainer.model, weights, { batch: 1 }));
    await trainer.release();
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
