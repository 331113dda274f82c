/**
 * npm run train -- --config <preset id | file.json> [--seed N] [--iterations N] [--out DIR] [--engine ort-web-wasm|ort-node|auto] [--reward FILE]
 * npm run train -- --resume <run folder | file.run.json> [--iterations N] [--out DIR]
 * npm run train -- --env-file <map.json> [--config <preset>] [...]
 *
 * Trains headless with the same core as the browser. Writes into DIR:
 *   config.json        the fully resolved configuration (defaults filled in)
 *   metrics.jsonl      one JSON object per iteration, the metric keys of ARCHITECTURE.md
 *   trajectories.jsonl sampled episodes (actions, log-probs, rewards, versions)
 *   policy.onnx        the trained policy, weights baked in, loadable by any ONNX runtime
 *   checkpoint.json    the trainer's full state (every trainer): every --checkpoint-every iterations,
 *                      at the end and on Ctrl-C, SIGTERM or SIGHUP; what --resume continues from
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { checkpointToJson, type Checkpoint } from '../core/runs/checkpoint.ts';
import { metricsToJsonl, REWARD_VERSIONS_FILE, trajectoriesToJsonl } from '../core/runs/format.ts';
import { parseRunConfig, stageStarts, type RunConfig } from '../core/presets/schema.ts';
import { exportPolicyOnnx } from '../core/models/export.ts';
import { policyCard } from '../core/runs/policyCard.ts';
import { heldOutSeeds } from '../core/util/rng.ts';
import { createTrainer, type WarmStartCache } from '../core/trainer/createTrainer.ts';
import { resolvePlan } from '../core/presets/plan.ts';
import { WARM_START_DIR } from '../core/trainer/warmStartCache.ts';
import { fileURLToPath } from 'node:url';
import { runTraining, TrainerEvents } from '../core/trainer/events.ts';
import { studentLabel } from '../core/trainer/stagedTrainer.ts';
import { trajectoryLine } from '../core/runs/trajectoryLine.ts';
import { chooseNodeEngine, loadNodeEngine, type NodeEngineName } from '../runtime/engine/node.ts';
import { summarize } from '../core/engine/choose.ts';
import { makeEnv } from '../core/envs/index.ts';
import { envKwargsText } from '../core/envs/kwargDocs.ts';
import type { Engine } from '../core/engine/types.ts';
import { createNodeWorkerPool } from '../runtime/pool/node.ts';
import { nodeTokenWorkerOn } from '../runtime/tokenWorker/node.ts';
import { fixedBroke, type SeedOutcome } from './evalDelta.ts';
import { intArg, parseCli, runWhenScript, UsageError } from './args.ts';
import { loadRunConfig, presetIds } from './presets.ts';
import { withRewardFile } from './reward.ts';
import { DEFAULT_MAP_PRESET, loadEnvFile, type EnvFile } from './envFile.ts';
import { DEFAULT_CODE_ENV_PRESET } from './codeEnvFile.ts';
import { loadCodeEnvs } from '../runtime/codeEnv/index.ts';
import { ENV_URL_USAGE, isRemoteEnv, withEnvUrl } from './remoteEnv.ts';
import { rewardLabFor } from '../runtime/rewardSandbox/index.ts';
import { CODE_HASH_CHARS, rewardCodeHash, rewardVersions, versionsForResume } from '../core/reward/versions.ts';
import { ScoringInterrupted } from '../core/reward/rewardTerms.ts';
import { METRIC_NAMINGS, renameRow, type MetricNaming } from '../core/metrics/lookup.ts';
import { loadResume } from './resume.ts';

const USAGE = `usage: npm run train -- --config <preset id | file.json> [--seed N] [--iterations N] [--out DIR] [--engine ort-web-wasm|ort-node|auto] [--trajectories N] [--eval N] [--reward FILE] [--force] [--checkpoint-every N] [--metric-names ours|trl|verl] [--env-url URL]
       npm run train -- --resume <run folder | file.run.json> [--iterations N] [--out DIR] [...]
       npm run train -- --env-file <map.json | env.js> [--config <preset id>] [...]
  --env-file FILE   train on an env from a file: a map drawn in the studio (.json, "kind": "grid-map"; refused with the reason if it cannot be solved; default preset ${DEFAULT_MAP_PRESET}) or a code env (.js: a JavaScript module exporting env, reset(seed), step(action); examples/envs/; run sandboxed (QuickJS) and checked first, problems named FILE:LINE; default preset ${DEFAULT_CODE_ENV_PRESET}); the preset's algorithm and policy train on it
${ENV_URL_USAGE}
  --reward FILE   user reward terms: an ES module whose named exports (step) => number are added to each step's reward, run sandboxed (QuickJS); stored in config.json
  --force   write into an --out folder that already holds a run (its files are replaced)
  --checkpoint-every N   save checkpoint.json (the trainer's full state) every N iterations (default 10; 0 = only at the end and on Ctrl-C)
  --resume PATH   continue a run from its last checkpoint: a CLI --out folder (continues in it unless --out) or a run file exported by the app; the config comes from the run, --iterations is the new total
  --metric-names trl|verl   write metrics.jsonl under TRL's GRPOTrainer or veRL's names (e.g. trl: reward, rewards/<term>/mean, frac_reward_zero_std, kl; verl: critic/score/mean, actor/ppo_kl, critic/vf_loss); keys without such a name keep ours. Default ours; --resume keeps the folder's naming
  --engine auto   time a few train steps of this run's model on ort-web-wasm and on ort-node (≤ 1.5 s), train on the faster
  --shipped-warm-start   load the warm start from public/warm-start/ when a file there was trained for exactly this config (npm run warm-start; as the tab does) instead of training it
  --eval N   before RL (after any warm start) and at the end, play N held-out seeds greedily and by sampling; writes eval.json (rates) and eval-episodes.jsonl (every episode)

stop signals: Ctrl-C (SIGINT), SIGTERM and SIGHUP each stop the run after the iteration in flight (one whose reward terms are still scoring is dropped, within about a second) and write every output, checkpoint.json included, so --resume continues it; a second signal quits at once

exit status: 0 done; 1 an invalid config (every problem listed), or a failed run (an error, or 5 iterations in a row whose updates were all skipped as non-finite: the outputs hold the last good weights); 2 bad command-line usage; 130, 143, 129 stopped by SIGINT, SIGTERM, SIGHUP after writing the outputs

presets: ${presetIds().join(', ')}`;

function fmt(x: number | undefined, digits = 3): string {
  return x === undefined || Number.isNaN(x) ? '-' : x.toFixed(digits);
}

/** Most held-out seeds --eval plays (each is two episodes kept in memory: greedy and sampled). */
const MAX_EVAL_EPISODES = 100_000;

/** What a run writes into its --out folder: finding any of them there means a run lives there. */
const RUN_FILES = ['config.json', 'metrics.jsonl', 'trajectories.jsonl', 'policy.onnx', 'policy.json', 'eval.json', 'eval-episodes.jsonl', 'checkpoint.json', REWARD_VERSIONS_FILE];

/** public/warm-start/ read as the tab reads it (--shipped-warm-start): a file's JSON by name, undefined when absent. */
function shippedWarmStarts(): WarmStartCache {
  const dir = resolve(dirname(fileURLToPath(import.meta.url)), '../../public', WARM_START_DIR);
  return {
    read: async (name) => (existsSync(join(dir, name)) ? (JSON.parse(readFileSync(join(dir, name), 'utf8')) as unknown) : undefined),
    onResult: (r) => console.log(r.loaded ? `warm start: loaded the shipped one (public/${WARM_START_DIR}/; it took ${r.savedS.toFixed(1)} s to train)` : `warm start: the shipped file was not used (${r.reason}); training it`),
  };
}

/** Default of --checkpoint-every: iterations between checkpoint saves. */
export const CHECKPOINT_EVERY = 10;

/** Writes via a temporary file and a rename, so a crash mid-write never leaves half a checkpoint. */
function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/**
 * Makes sure `out` can take this run's files before anything trains: refuses a folder that
 * already holds a run (unless `force`), creates missing folders, and writes a probe file, so an
 * unwritable path fails at once with its reason. Returns the folders it created, outermost
 * first (`removeCreated` takes them away again when the run is refused after all).
 */
export function prepareOut(out: string, force: boolean): string[] {
  if (out.trim() === '') throw new UsageError('--out must name a folder (got an empty string; it would have meant the current folder)');
  const abs = resolve(out);
  const missing: string[] = [];
  try {
    if (existsSync(abs)) {
      if (!statSync(abs).isDirectory()) throw new Error('it exists and is not a folder');
      const taken = RUN_FILES.filter((f) => existsSync(join(abs, f)));
      if (taken.length > 0 && !force) throw new UsageError(`--out ${out} already holds a run (${taken.join(', ')}): pass --force to overwrite it, or choose another folder`);
    } else {
      // mkdir -p one level at a time: Node's recursive mkdir never returns on some special file
      // systems (--out /proc/x hung), while a plain mkdir fails at once with the reason.
      const wanted: string[] = [];
      for (let p = abs; !existsSync(p); p = dirname(p)) wanted.unshift(p);
      for (const dir of wanted) {
        mkdirSync(dir);
        missing.push(dir);
      }
    }
    const probe = join(abs, `.write-test-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (e) {
    removeCreated(missing);
    if (e instanceof UsageError) throw e;
    throw new UsageError(`cannot write the run to --out ${out}: ${(e as Error).message}`);
  }
  return missing;
}

/** Removes folders `prepareOut` created (innermost first), each only while it is still empty. */
export function removeCreated(dirs: readonly string[]): void {
  for (const dir of [...dirs].reverse()) {
    try {
      rmdirSync(dir);
    } catch {
      return; // not empty (or gone): leave it and its parents
    }
  }
}

/**
 * Signals that stop a run as Ctrl-C does, each with its exit status (the shell's convention,
 * 128 + the signal's number): the outputs were written and checkpoint.json resumes the run.
 */
export const STOP_SIGNALS = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

export type StopSignal = keyof typeof STOP_SIGNALS;

/** Exit status after Ctrl-C (128 + SIGINT): outputs were written. */
export const EXIT_INTERRUPTED = STOP_SIGNALS.SIGINT;

/**
 * Listens for the stop signals: the first calls `onStop` (the run then stops after its iteration
 * and writes its outputs), a second one of any kind quits at once with its status. `dispose`
 * restores the default handling.
 */
function listenForStop(onStop: (sig: StopSignal) => void): { dispose: () => void } {
  const names = Object.keys(STOP_SIGNALS) as StopSignal[];
  const quitNow = (sig: StopSignal) => process.exit(STOP_SIGNALS[sig]);
  const first = (sig: StopSignal) => {
    for (const n of names) {
      process.off(n, first);
      process.on(n, quitNow);
    }
    // A hung-up terminal fails writes to it: the outputs are files, so carry on without it.
    if (sig === 'SIGHUP') for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
    onStop(sig);
  };
  for (const n of names) process.on(n, first);
  return {
    dispose: () => {
      for (const n of names) {
        process.off(n, first);
        process.off(n, quitNow);
      }
    },
  };
}

/** The config with its env replaced by the file's, checked again as a whole (the policy must fit the env). */
export function withEnvFile(config: RunConfig, f: EnvFile): RunConfig {
  if (config.stages.length > 0) throw new UsageError(`--env-file replaces the env of a one-stage run; preset ${config.id} is a pipeline of ${config.stages.length} stages, each with its own env`);
  const r = parseRunConfig({ ...config, env: f.env });
  if (!r.ok) throw new UsageError(`--env-file ${f.path} with preset ${config.id}:\n  - ${r.messages.join('\n  - ')}`);
  console.log(`env file ${f.summary}`);
  return r.config;
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
      eval: { type: 'string', default: '0' },
      quiet: { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
      resume: { type: 'string' },
      'checkpoint-every': { type: 'string', default: String(CHECKPOINT_EVERY) },
      reward: { type: 'string' },
      'env-file': { type: 'string' },
      'env-url': { type: 'string' },
      'metric-names': { type: 'string' },
      'shipped-warm-start': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (values.help) {
    console.log(`${USAGE}\nenv kwargs (config env.kwargs), default (accepted):\n${envKwargsText()}`);
    return 0;
  }
  if (values.resume !== undefined && (values.config !== undefined || values.seed !== undefined)) {
    throw new UsageError(`--resume continues a run with its own config: leave out --config and --seed (--iterations sets the new total)`);
  }
  if (values['env-file'] !== undefined && values.resume !== undefined) throw new UsageError('--resume keeps the env the run was trained on (config.json holds it): leave out --env-file');
  const envFile = values['env-file'] !== undefined ? await loadEnvFile(values['env-file']) : null;
  if (!values.config && values.resume === undefined && !envFile) throw new UsageError(`--config (or --resume, or --env-file) is required\n\n${USAGE}`);
  if (values.resume !== undefined && values.resume.trim() === '') throw new UsageError('--resume must name a run folder or a .run.json file (got an empty string)');
  if (values.out !== undefined && values.out.trim() === '') throw new UsageError('--out must name a folder (got an empty string; it would have meant the current folder)');
  if (values.engine !== 'ort-web-wasm' && values.engine !== 'ort-node' && values.engine !== 'auto') throw new UsageError(`--engine must be ort-web-wasm, ort-node or auto, got ${values.engine}`);
  const namingArg = values['metric-names'];
  if (namingArg !== undefined && !METRIC_NAMINGS.includes(namingArg as MetricNaming)) throw new UsageError(`--metric-names must be ${METRIC_NAMINGS.join(', ')}, got ${namingArg}`);
  const checkpointEvery = intArg(values['checkpoint-every'], 'checkpoint-every', 0) ?? CHECKPOINT_EVERY;
  // A run's config may name a code env (config.json of an --env-file run): its sandbox must be loaded before the config is validated.
  if (values.resume !== undefined || values.config?.endsWith('.json')) await loadCodeEnvs();
  const resume = values.resume !== undefined ? loadResume(values.resume) : null;
  if (resume && values.reward !== undefined) throw new UsageError(`--resume keeps the reward code the run was trained with (its config and ${REWARD_VERSIONS_FILE} hold it): leave out --reward`);
  /** The names metrics.jsonl is written in; a resumed folder keeps its own unless told otherwise (the whole file is rewritten in it). */
  const naming: MetricNaming = (namingArg as MetricNaming | undefined) ?? resume?.metricNaming ?? 'ours';
  let config = resume ? resume.config : loadRunConfig(values.config ?? envFile!.defaultPreset);
  if (envFile) config = withEnvFile(config, envFile);
  config = await withEnvUrl(config, values['env-url']);
  if (values.reward !== undefined) config = withRewardFile(config, values.reward);
  if (!resume) config.seed = intArg(values.seed, 'seed') ?? config.seed;
  config.iterations = intArg(values.iterations, 'iterations', 1) ?? config.iterations;
  /** Iterations already trained (the checkpoint's); this session trains the rest. */
  const startAt = resume?.checkpoint.iteration ?? 0;
  if (resume && config.iterations <= startAt) {
    throw new UsageError(`--resume ${values.resume}: the checkpoint is at iteration ${startAt} of ${config.iterations}; pass --iterations N with N > ${startAt} to train further`);
  }
  const keepTraj = intArg(values.trajectories, 'trajectories', 0, 100_000) ?? 4;
  const evalN = intArg(values.eval, 'eval', 0, MAX_EVAL_EPISODES) ?? 0;
  const out = values.out ?? resume?.dir ?? join('runs', `${config.id}-seed${config.seed}-${resume ? 'resumed-' : ''}${new Date().toISOString().replace(/[:.]/g, '-')}`);
  // Resuming a folder in place is what --resume is for: no --force needed there.
  const inPlace = resume?.dir != null && resolve(resume.dir) === resolve(out);
  const created = prepareOut(out, values.force || inPlace);
  /** The first stop signal (Ctrl-C, SIGTERM, SIGHUP): the run stops after its iteration and writes its outputs. */
  let stopSignal: StopSignal | null = null;
  let rewardLab: Awaited<ReturnType<typeof rewardLabFor>>;
  const stopListener = listenForStop((sig) => {
    stopSignal = sig;
    // An iteration whose reward terms are still scoring is dropped at the scorer's next slice (≤ ~0.3 s).
    rewardLab?.scorer.interrupt?.();
    const what = sig === 'SIGINT' ? 'interrupted' : `${sig} received`;
    console.log(`\n${what}: stopping after this iteration${rewardLab ? ' (or dropping it while its reward terms score)' : ''} and writing outputs (${sig === 'SIGINT' ? 'Ctrl-C' : 'a signal'} again to quit at once)`);
  });
  /** True once the folder holds this session's files: before that, a refused run takes away the folders it created. */
  let started = false;
  try {
    const metricsPath = join(out, 'metrics.jsonl');
    const trajPath = join(out, 'trajectories.jsonl');
    const checkpointPath = join(out, 'checkpoint.json');
    /** Every reward-code version the run trained with, each with the iteration it took effect (config.json holds v1). */
    const versions = resume ? resume.rewardVersions : rewardVersions(config.reward.code, []);
    /** checkpoint.json's text: the trainer's state and every reward-code version in force up to it. */
    const checkpointText = (cp: Checkpoint) => JSON.stringify(checkpointToJson({ ...cp, rewardCode: versionsForResume(versions, cp.iteration).kept }));
    /** Written once the trainer exists (and took the checkpoint): a refused resume leaves a folder as it was. */
    const writeStart = () => {
      started = true;
      writeFileSync(join(out, 'config.json'), JSON.stringify(config, null, 2) + '\n');
      if (versions.length > 0) writeFileSync(join(out, REWARD_VERSIONS_FILE), JSON.stringify(versions, null, 2) + '\n');
      else rmSync(join(out, REWARD_VERSIONS_FILE), { force: true });
      // A resumed run's files start with the iterations before its checkpoint.
      writeFileSync(metricsPath, resume ? metricsToJsonl(resume.metrics.map((r) => renameRow(r, naming) as Record<string, number>)) : '');
      writeFileSync(trajPath, resume ? trajectoriesToJsonl(resume.trajectories) : '');
      if (resume && !inPlace) writeAtomic(checkpointPath, checkpointText(resume.checkpoint));
    };
    if (!resume) writeStart();
    const lastWall = resume?.metrics.at(-1)?.wall_s;
    /** Training seconds before this session (a resumed run's wall_s continues). */
    const wallOffset = lastWall !== undefined && Number.isFinite(lastWall) ? lastWall : 0;

    // A reward module that does not load, or whose terms throw or loop on a dry run, stops here, before training.
    // A resumed run scores on with the version in force at its checkpoint, numbered as before.
    const inForce = resume ? resume.rewardInForce : (versions[0] ?? null);
    rewardLab = await rewardLabFor({ ...config, reward: { ...config.reward, code: inForce?.code ?? '' } }, (m) => console.warn(`warning: ${m}`), inForce?.version ?? 1);
    let engine: Engine;
    if (values.engine === 'auto') {
      const { engine: chosen, decision } = await chooseNodeEngine(config);
      engine = chosen;
      console.log(`engine auto: ${summarize(decision)}; using ${engine.name} (${decision.reason})`);
    } else engine = await loadNodeEngine(values.engine as NodeEngineName);
    // The config as this session trains it (seed, iterations, env and reward overrides applied), resolved once.
    const trainer = await createTrainer(resolvePlan(config), engine, {
      rewardLab,
      workerPool: (size) => (model, weights) => createNodeWorkerPool({ size, model, weights }),
      tokenWorker: nodeTokenWorkerOn(engine.name as NodeEngineName),
      // A token run's checkpoint replaces the imitation warm start's result: no need to train it again.
      resume: resume?.checkpoint,
      warmStartCache: values['shipped-warm-start'] ? shippedWarmStarts() : undefined,
      onWarmStart: (r, total) => {
        if (!values.quiet && (r.step % 50 === 0 || r.step === total - 1)) {
          console.log(`warm start ${String(r.step + 1).padStart(5)}/${total}  ${r.wallS.toFixed(1).padStart(6)}s  ce ${r.ceLoss.toFixed(3)}  p(expert token) ${r.targetProb.toFixed(3)}`);
        }
      },
    });
    if (resume) {
      try {
        await trainer.restore(resume.checkpoint);
      } catch (e) {
        await trainer.release();
        throw new Error(`--resume ${values.resume}: ${(e as Error).message}`, { cause: e });
      }
      writeStart();
      const dropped = resume.dropped > 0 ? ` (${resume.dropped} later metric rows dropped: they are trained again)` : '';
      console.log(`resuming ${values.resume} from its checkpoint at iteration ${startAt}${dropped}`);
    } else if (!trainer.canCheckpoint && !values.quiet) console.log('note: this trainer keeps no checkpoints, so this run cannot be resumed');
    const saveCheckpoint = async () => writeAtomic(checkpointPath, checkpointText(await trainer.checkpoint()));
    const sched = config.rollout.mode === 'async' ? `async, staleness ≤ ${config.rollout.maxStaleness}` : 'sync';
    const pool = config.rollout.workers > 0 ? `${config.rollout.workers} rollout workers` : 'in-thread rollouts';
    console.log(`training ${config.id} (${makeEnv(config.env.id, config.env.kwargs).spec.title} [${config.env.id}], ${config.algo.algo}; ${sched}, ${pool}) on ${engine.name} for ${config.iterations} iterations -> ${out}`);
    // The reward code's short hash: the Runs view shows the same for this code (imported or trained in a browser).
    const codeHash = await rewardCodeHash(inForce?.code ?? '');
    if (codeHash && inForce) {
      const which = versions.length > 1 || resume ? `v${inForce.version} of ${versions.length}, in force since iteration ${inForce.iteration}; ${REWARD_VERSIONS_FILE} lists every version` : `config.json's reward.code`;
      console.log(`reward code ${codeHash} (${which}; SHA-256, first ${CODE_HASH_CHARS} hex digits; the Runs view shows the same)`);
    }
    const heldOut = heldOutSeeds(evalN);
    const evalEpisodesPath = join(out, 'eval-episodes.jsonl');
    if (evalN > 0) writeFileSync(evalEpisodesPath, '');
    const evalOutcomes: { greedy: SeedOutcome[]; sampled: SeedOutcome[] }[] = [];
    const evaluate = async (when: string) => {
      const greedy = await trainer.evaluate(heldOut, 0);
      const sampled = await trainer.evaluate(heldOut, 1);
      // Every held-out episode, so failures can be read (which digit, which hop) and runs diffed.
      const lines = [...greedy.map((e) => ({ e, temperature: 0 })), ...sampled.map((e) => ({ e, temperature: 1 }))].map(({ e, temperature }) =>
        JSON.stringify({ when, temperature, seed: e.seed, success: e.success, return: Number(Array.from(e.rewards).reduce((a, b) => a + b, 0).toFixed(6)), actions: Array.from(e.actions as ArrayLike<string | number>), transcript: 'transcript' in e ? e.transcript : undefined }),
      );
      appendFileSync(evalEpisodesPath, lines.join('\n') + '\n');
      const rate = (eps: readonly { success: boolean }[]) => eps.filter((e) => e.success).length / Math.max(1, eps.length);
      const r: Record<string, unknown> = { when, episodes: evalN, greedy_success: rate(greedy), sampled_success: rate(sampled) };
      // After RL: how many held-out seeds RL fixed and broke, against the evaluation before it.
      const before = evalOutcomes[0];
      if (before) Object.assign(r, Object.fromEntries(Object.entries({ greedy: fixedBroke(before.greedy, greedy), sampled: fixedBroke(before.sampled, sampled) }).flatMap(([k, v]) => [[`${k}_fixed`, v.fixed], [`${k}_broke`, v.broke]])));
      evalOutcomes.push({ greedy, sampled });
      console.log(`eval (${when}, ${evalN} held-out seeds): greedy success ${(r.greedy_success as number).toFixed(3)}, sampled ${(r.sampled_success as number).toFixed(3)}${before ? `; RL fixed ${r.greedy_fixed} and broke ${r.greedy_broke} seeds greedy, fixed ${r.sampled_fixed} and broke ${r.sampled_broke} sampled` : ''}`);
      return r;
    };
    const evals = evalN > 0 ? [await evaluate('before RL')] : [];
    const t0 = performance.now();
    /**
     * With user reward terms a stop signal may drop the iteration being scored: the outputs then
     * come from the last finished one, whose checkpoint is kept here (taken between iterations).
     */
    // A code env can fail in any iteration (its sandbox stopped: out of memory, past its deadline),
    // so its run keeps the last finished iteration's checkpoint too, and writes it on an error.
    const codeEnvRun = config.env.id.startsWith('code/') || isRemoteEnv(config.env.id);
    const keepLastGood = (rewardLab !== undefined || codeEnvRun) && trainer.canCheckpoint;
    let lastGood: Checkpoint | null = keepLastGood ? (resume ? resume.checkpoint : await trainer.checkpoint()) : null;
    /** The iteration's error when a stop signal interrupted its scoring (not a failure of the run). */
    let droppedIteration: number | null = null;
    /** An error stopped the run. */
    let failed = false;
    const events = new TrainerEvents();
    // Staged runs: a line where each stage begins (`pipeline/stage` is 1-based).
    const starts = stageStarts(config.stages);
    let shownStage = 0;
    events.on('iteration', (e) => {
      const m = e.metrics;
      const elapsed = (performance.now() - t0) / 1000;
      appendFileSync(metricsPath, JSON.stringify(renameRow({ iteration: e.iteration, wall_s: Number((wallOffset + elapsed).toFixed(3)), ...m }, naming)) + '\n');
      const stage = m['pipeline/stage'];
      if (stage !== undefined && stage !== shownStage && !values.quiet) {
        shownStage = stage;
        const st = config.stages[stage - 1];
        console.log(`== stage ${stage}/${config.stages.length}: ${st.name} (iterations ${starts[stage - 1] - 1}–${starts[stage - 1] + st.iterations - 2}${st.distill ? `; distilling into ${studentLabel(st.distill.student)}` : ''})`);
      }
      if (!values.quiet) {
        console.log(
          `it ${String(e.iteration).padStart(4)}  ${elapsed.toFixed(1).padStart(6)}s  success ${fmt(m['episode/success_rate'], 2)}  reward ${fmt(m['reward/mean'])}  len ${fmt(m['episode/length_mean'], 1)}  entropy ${fmt(m['actor/entropy'])}  zero-std ${fmt(m['groups/frac_zero_std'], 2)}${'distill/teacher_prob' in m ? `  kl(teacher) ${fmt(m['actor/kl_ref'])}  p_teacher ${fmt(m['distill/teacher_prob'])}` : ''}${e.allApplied ? '' : '  [NaN guard skipped an update]'}`,
        );
      }
    });
    events.on('trajectories', (e) => {
      for (const s of e.episodes) appendFileSync(trajPath, JSON.stringify(trajectoryLine(e.iteration, s.episode.envId, s.episode, s.reward, s.advantage)) + '\n');
    });
    events.on('error', (e) => {
      if (stopSignal && (e.error instanceof ScoringInterrupted || (e.error as Error)?.name === 'ScoringInterrupted')) droppedIteration = e.iteration;
      else {
        failed = true;
        console.error(`error in iteration ${e.iteration}: ${e.message}`);
      }
    });
    let stopped;
    /** The iteration of the checkpoint written after an error (null: none was). */
    let savedAfterError: number | null = null;
    try {
      stopped = await runTraining(trainer, events, {
        iterations: config.iterations - startAt,
        stopAtSuccess: config.stopAtSuccess,
        trajectories: keepTraj,
        shouldStop: () => stopSignal !== null,
        afterIteration: async (it) => {
          const periodic = trainer.canCheckpoint && checkpointEvery > 0 && (it + 1) % checkpointEvery === 0;
          if (!periodic && !keepLastGood) return;
          const cp = await trainer.checkpoint();
          if (keepLastGood) lastGood = cp;
          if (periodic) writeAtomic(checkpointPath, checkpointText(cp));
        },
      });
      if (droppedIteration !== null) {
        // The signal stopped the scoring of an iteration: the run is as the last finished one left it
        // (scoring comes before any update), and that is what the outputs hold.
        stopped = { ...stopped, reason: 'requested' as const };
        if (lastGood) writeAtomic(checkpointPath, checkpointText(lastGood));
      } else if (stopped.reason !== 'error' && trainer.canCheckpoint) {
        // At the end and on a stop signal; after an error the failed step's state is not one to resume from:
        await saveCheckpoint();
      } else if (stopped.reason === 'error' && lastGood) {
        // the last finished iteration's is (kept for code envs and reward code; otherwise the last periodic one stays).
        writeAtomic(checkpointPath, checkpointText(lastGood));
        savedAfterError = lastGood.iteration;
      }
      if (stopped.reason === 'success') console.log(`success ≥ ${config.stopAtSuccess} over the last 3 iterations: stopping`);
      if (evalN > 0 && stopped.reason !== 'error') {
        // A stop signal wants the process gone soon: the held-out evaluation is left for later.
        if (stopSignal) console.log(`eval (after RL): skipped (stopped by ${stopSignal}); run it later with --resume and --eval`);
        else {
          evals.push(await evaluate('after RL'));
          writeFileSync(join(out, 'eval.json'), JSON.stringify(evals, null, 2) + '\n');
        }
      }
    } finally {
      const weights = await trainer.getWeights();
      // Token policies export the KV-cache decode graph (one token per call), what a rollout runs.
      const graph = trainer.model.kind === 'transformer' ? 'decode' : 'full';
      writeFileSync(join(out, 'policy.onnx'), exportPolicyOnnx(trainer.model, weights, { batch: 1, graph }));
      // What policy.onnx needs beside it to be used elsewhere: its inputs, how to build them, the actions.
      const done = startAt + (stopped?.iterations ?? 0);
      writeFileSync(join(out, 'policy.json'), JSON.stringify(policyCard(config, { iteration: done, rewardCodeHash: codeHash }), null, 2) + '\n');
      await trainer.release();
      rewardLab?.scorer.close();
    }
    /** Iterations of the run so far (a resumed run counts from its checkpoint). */
    const iterations = startAt + stopped.iterations;
    const wrote = `config.json, metrics.jsonl, trajectories.jsonl, policy.onnx, policy.json${existsSync(checkpointPath) ? ', checkpoint.json' : ''}${versions.length > 0 ? `, ${REWARD_VERSIONS_FILE}` : ''}`;
    if (stopped.reason === 'error') {
      const cp = savedAfterError !== null ? `checkpoint.json: the state after iteration ${savedAfterError - 1}, the last finished one; continue with npm run train -- --resume ${out}` : 'a checkpoint.json is the last one saved before the error';
      const what = failed && codeEnvRun ? ` (the ${isRemoteEnv(config.env.id) ? 'remote' : 'code'} env failed, see the error above)` : '';
      console.error(`stopped after ${iterations} iterations${what}; wrote ${wrote} (policy.onnx: the last good weights; ${cp}) to ${out}`);
      return 1;
    }
    if (stopped.reason === 'requested') {
      const sig: StopSignal = stopSignal ?? 'SIGINT';
      const dropped = droppedIteration !== null ? ` (iteration ${iterations} was being scored by the reward terms: dropped, it is trained again on resume)` : '';
      console.log(`interrupted${sig === 'SIGINT' ? '' : ` by ${sig}`} at iteration ${iterations}${dropped}; wrote ${wrote} to ${out}; continue with: npm run train -- --resume ${out}`);
      return STOP_SIGNALS[sig];
    }
    console.log(`done: ${iterations} iterations (${stopped.iterations} this session) in ${((performance.now() - t0) / 1000).toFixed(1)} s; wrote ${wrote} to ${out}`);
    return 0;
  } catch (e) {
    // A run refused before it wrote anything (a resume whose checkpoint the trainer refuses, say) leaves no folder behind.
    if (!started) removeCreated(created);
    throw e;
  } finally {
    stopListener.dispose();
    rewardLab?.scorer.close();
  }
}

runWhenScript(import.meta.url, main);
