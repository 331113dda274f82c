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
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkpointToJson, type Checkpoint } from '../core/runs/checkpoint.ts';
import { metricsToJsonl, REWARD_VERSIONS_FILE, trajectoriesToJsonl } from '../core/runs/format.ts';
import { parseRunConfig, stageStarts, type RunConfig } from '../core/presets/schema.ts';
import { exportPolicyOnnx } from '../core/models/export.ts';
import { policyCard } from '../core/runs/policyCard.ts';
import { createTrainer, type WarmStartCache } from '../core/trainer/createTrainer.ts';
import { resolvePlan } from '../core/presets/plan.ts';
import type { RunTrainer } from '../core/trainer/api.ts';
import { WARM_START_DIR } from '../core/trainer/warmStartCache.ts';
import { runTraining, TrainerEvents, type TrainerEventOf } from '../core/trainer/events.ts';
import { studentLabel } from '../core/trainer/stagedTrainer.ts';
import { trajectoryLine } from '../core/runs/trajectoryLine.ts';
import { chooseNodeEngine, loadNodeEngine, type NodeEngineName } from '../runtime/engine/node.ts';
import { summarize } from '../core/engine/choose.ts';
import { makeEnv } from '../core/envs/index.ts';
import { envKwargsText } from '../core/envs/kwargDocs.ts';
import type { Engine } from '../core/engine/types.ts';
import { createNodeWorkerPool } from '../runtime/pool/node.ts';
import { nodeTokenWorkerOn } from '../runtime/tokenWorker/node.ts';
import { intArg, parseCli, runWhenScript, UsageError } from './args.ts';
import { loadRunConfig, presetIds } from './presets.ts';
import { withRewardFile } from './reward.ts';
import { DEFAULT_MAP_PRESET, loadEnvFile, type EnvFile } from './envFile.ts';
import { DEFAULT_CODE_ENV_PRESET } from './codeEnvFile.ts';
import { loadCodeEnvs } from '../runtime/codeEnv/index.ts';
import { ENV_URL_USAGE, isRemoteEnv, withEnvUrl } from './remoteEnv.ts';
import { rewardLabFor } from '../runtime/rewardSandbox/index.ts';
import { CODE_HASH_CHARS, rewardCodeHash, rewardVersions, versionsForResume, type CodeVersion } from '../core/reward/versions.ts';
import { ScoringInterrupted } from '../core/reward/rewardTerms.ts';
import { METRIC_NAMINGS, renameRow, type MetricNaming } from '../core/metrics/lookup.ts';
import { loadResume, type ResumeSource } from './resume.ts';
import { letSignalsIn, listenForStop, STOP_SIGNALS, type StopSignal } from './stopSignals.ts';
import { prepareOut, quitNowMessage, removeCreated, writeAtomic, type RunProgress } from './runFolder.ts';
import { makeEvaluator, MAX_EVAL_EPISODES } from './trainEval.ts';

export { EXIT_INTERRUPTED, STOP_SIGNALS, type StopSignal } from './stopSignals.ts';

type RewardLab = Awaited<ReturnType<typeof rewardLabFor>>;

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

stop signals: Ctrl-C (SIGINT), SIGTERM and SIGHUP each stop the run after the iteration in flight (one whose reward terms are still scoring is dropped, within about a second) and write every output, checkpoint.json included, so --resume continues it; during a warm start, once it is done, before the first iteration; a second signal quits at once, saying where the run was and what --out keeps

exit status: 0 done; 1 an invalid config (every problem listed), or a failed run (an error, or 5 iterations in a row whose updates were all skipped as non-finite: the outputs hold the last good weights); 2 bad command-line usage; 130, 143, 129 stopped by SIGINT, SIGTERM, SIGHUP after writing the outputs

presets: ${presetIds().join(', ')}`;

function fmt(x: number | undefined, digits = 3): string {
  return x === undefined || Number.isNaN(x) ? '-' : x.toFixed(digits);
}

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

/** The config with its env replaced by the file's, checked again as a whole (the policy must fit the env). */
export function withEnvFile(config: RunConfig, f: EnvFile): RunConfig {
  if (config.stages.length > 0) throw new UsageError(`--env-file replaces the env of a one-stage run; preset ${config.id} is a pipeline of ${config.stages.length} stages, each with its own env`);
  const r = parseRunConfig({ ...config, env: f.env });
  if (!r.ok) throw new UsageError(`--env-file ${f.path} with preset ${config.id}:\n  - ${r.messages.join('\n  - ')}`);
  console.log(`env file ${f.summary}`);
  return r.config;
}

function parseTrainArgs(argv: string[]) {
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
  return values;
}

type TrainArgs = ReturnType<typeof parseTrainArgs>;

/** Refuses flag combinations that cannot mean a run, each with what to change. */
function checkArgs(values: TrainArgs): void {
  if (values.resume !== undefined && (values.config !== undefined || values.seed !== undefined)) {
    throw new UsageError(`--resume continues a run with its own config: leave out --config and --seed (--iterations sets the new total)`);
  }
  if (values['env-file'] !== undefined && values.resume !== undefined) throw new UsageError('--resume keeps the env the run was trained on (config.json holds it): leave out --env-file');
  if (!values.config && values.resume === undefined && values['env-file'] === undefined) throw new UsageError(`--config (or --resume, or --env-file) is required\n\n${USAGE}`);
  if (values.resume !== undefined && values.resume.trim() === '') throw new UsageError('--resume must name a run folder or a .run.json file (got an empty string)');
  if (values.out !== undefined && values.out.trim() === '') throw new UsageError('--out must name a folder (got an empty string; it would have meant the current folder)');
  if (values.engine !== 'ort-web-wasm' && values.engine !== 'ort-node' && values.engine !== 'auto') throw new UsageError(`--engine must be ort-web-wasm, ort-node or auto, got ${values.engine}`);
  const namingArg = values['metric-names'];
  if (namingArg !== undefined && !METRIC_NAMINGS.includes(namingArg as MetricNaming)) throw new UsageError(`--metric-names must be ${METRIC_NAMINGS.join(', ')}, got ${namingArg}`);
}

/** What one `npm run train` session trains, resolved from its flags (and --resume's folder) before anything is written. */
interface TrainSetup {
  values: TrainArgs;
  config: RunConfig;
  resume: ResumeSource | null;
  /** The names metrics.jsonl is written in. */
  naming: MetricNaming;
  /** Iterations already trained (the checkpoint's); this session trains the rest. */
  startAt: number;
  checkpointEvery: number;
  keepTraj: number;
  evalN: number;
  out: string;
  /** Resuming a folder in place (no --force needed there). */
  inPlace: boolean;
}

async function resolveSetup(values: TrainArgs): Promise<TrainSetup> {
  const envFile = values['env-file'] !== undefined ? await loadEnvFile(values['env-file']) : null;
  const checkpointEvery = intArg(values['checkpoint-every'], 'checkpoint-every', 0) ?? CHECKPOINT_EVERY;
  // A run's config may name a code env (config.json of an --env-file run): its sandbox must be loaded before the config is validated.
  if (values.resume !== undefined || values.config?.endsWith('.json')) await loadCodeEnvs();
  const resume = values.resume !== undefined ? loadResume(values.resume) : null;
  if (resume && values.reward !== undefined) throw new UsageError(`--resume keeps the reward code the run was trained with (its config and ${REWARD_VERSIONS_FILE} hold it): leave out --reward`);
  /** A resumed folder keeps its own names unless told otherwise (the whole file is rewritten in it). */
  const naming: MetricNaming = (values['metric-names'] as MetricNaming | undefined) ?? resume?.metricNaming ?? 'ours';
  let config = resume ? resume.config : loadRunConfig(values.config ?? envFile!.defaultPreset);
  if (envFile) config = withEnvFile(config, envFile);
  config = await withEnvUrl(config, values['env-url']);
  if (values.reward !== undefined) config = withRewardFile(config, values.reward);
  if (!resume) config.seed = intArg(values.seed, 'seed') ?? config.seed;
  config.iterations = intArg(values.iterations, 'iterations', 1) ?? config.iterations;
  const startAt = resume?.checkpoint.iteration ?? 0;
  if (resume && config.iterations <= startAt) {
    throw new UsageError(`--resume ${values.resume}: the checkpoint is at iteration ${startAt} of ${config.iterations}; pass --iterations N with N > ${startAt} to train further`);
  }
  const keepTraj = intArg(values.trajectories, 'trajectories', 0, 100_000) ?? 4;
  const evalN = intArg(values.eval, 'eval', 0, MAX_EVAL_EPISODES) ?? 0;
  const out = values.out ?? resume?.dir ?? join('runs', `${config.id}-seed${config.seed}-${resume ? 'resumed-' : ''}${new Date().toISOString().replace(/[:.]/g, '-')}`);
  const inPlace = resume?.dir != null && resolve(resume.dir) === resolve(out);
  return { values, config, resume, naming, startAt, checkpointEvery, keepTraj, evalN, out, inPlace };
}

/** What the stop signals and the session share while a run trains. */
interface Session {
  /** The first stop signal (Ctrl-C, SIGTERM, SIGHUP): the run stops after its iteration and writes its outputs. */
  stopSignal: StopSignal | null;
  rewardLab: RewardLab | undefined;
  /** True once the folder holds this session's files: before that, a refused run takes away the folders it created. */
  started: boolean;
  progress: RunProgress;
}

export async function main(argv: string[]): Promise<number> {
  const values = parseTrainArgs(argv);
  if (values.help) {
    console.log(`${USAGE}\nenv kwargs (config env.kwargs), default (accepted):\n${envKwargsText()}`);
    return 0;
  }
  checkArgs(values);
  const setup = await resolveSetup(values);
  const created = prepareOut(setup.out, values.force || setup.inPlace);
  const s: Session = { stopSignal: null, rewardLab: undefined, started: false, progress: { phase: 'setup', warmStep: 0, warmSteps: 0, iterations: setup.startAt, checkpointAt: setup.inPlace ? setup.startAt : null } };
  const stopListener = listenForStop(
    (sig) => {
      s.stopSignal = sig;
      // An iteration whose reward terms are still scoring is dropped at the scorer's next slice (≤ ~0.3 s).
      s.rewardLab?.scorer.interrupt?.();
      const what = sig === 'SIGINT' ? 'interrupted' : `${sig} received`;
      const when = s.progress.phase === 'training' ? `after this iteration${s.rewardLab ? ' (or dropping it while its reward terms score)' : ''}` : `once the ${s.progress.phase === 'warm start' ? 'warm start is done' : 'trainer is ready'}, before the first iteration,`;
      console.log(`\n${what}: stopping ${when} and writing outputs (${sig === 'SIGINT' ? 'Ctrl-C' : 'a signal'} again to quit at once)`);
    },
    (sig) => quitNowMessage(sig, setup.out, s.progress),
  );
  try {
    return await trainSession(setup, s);
  } catch (e) {
    // A run refused before it wrote anything (a resume whose checkpoint the trainer refuses, say) leaves no folder behind.
    if (!s.started) removeCreated(created);
    throw e;
  } finally {
    stopListener.dispose();
    s.rewardLab?.scorer.close();
  }
}

/** The folder's files: paths, the start-of-run files, and checkpoint.json (every reward-code version in force up to it). */
function runFiles(setup: TrainSetup, s: Session) {
  const { out, resume, config, naming } = setup;
  const metricsPath = join(out, 'metrics.jsonl');
  const trajPath = join(out, 'trajectories.jsonl');
  const checkpointPath = join(out, 'checkpoint.json');
  /** Every reward-code version the run trained with, each with the iteration it took effect (config.json holds v1). */
  const versions = resume ? resume.rewardVersions : rewardVersions(config.reward.code, []);
  const writeCheckpoint = (cp: Checkpoint) => {
    writeAtomic(checkpointPath, JSON.stringify(checkpointToJson({ ...cp, rewardCode: versionsForResume(versions, cp.iteration).kept })));
    s.progress.checkpointAt = cp.iteration;
  };
  /** Written once the trainer exists (and took the checkpoint): a refused resume leaves a folder as it was. */
  const writeStart = () => {
    s.started = true;
    writeFileSync(join(out, 'config.json'), JSON.stringify(config, null, 2) + '\n');
    if (versions.length > 0) writeFileSync(join(out, REWARD_VERSIONS_FILE), JSON.stringify(versions, null, 2) + '\n');
    else rmSync(join(out, REWARD_VERSIONS_FILE), { force: true });
    // A resumed run's files start with the iterations before its checkpoint.
    writeFileSync(metricsPath, resume ? metricsToJsonl(resume.metrics.map((r) => renameRow(r, naming) as Record<string, number>)) : '');
    writeFileSync(trajPath, resume ? trajectoriesToJsonl(resume.trajectories) : '');
    if (resume && !setup.inPlace) writeCheckpoint(resume.checkpoint);
  };
  return { metricsPath, trajPath, checkpointPath, versions, writeCheckpoint, writeStart };
}

type RunFiles = ReturnType<typeof runFiles>;

/** The engine --engine names (auto: timed on this run's model). */
async function chooseEngine(config: RunConfig, name: string): Promise<Engine> {
  if (name !== 'auto') return loadNodeEngine(name as NodeEngineName);
  const { engine, decision } = await chooseNodeEngine(config);
  console.log(`engine auto: ${summarize(decision)}; using ${engine.name} (${decision.reason})`);
  return engine;
}

/**
 * The run's trainer, its warm start trained (or loaded) on the way. Each warm-start step gives
 * the event loop a turn, so a stop signal is heard while it trains (a second one quits at once).
 */
async function buildTrainer(setup: TrainSetup, s: Session, engine: Engine): Promise<RunTrainer> {
  const { config, resume, values } = setup;
  // The config as this session trains it (seed, iterations, env and reward overrides applied), resolved once.
  const trainer = await createTrainer(resolvePlan(config), engine, {
    rewardLab: s.rewardLab,
    workerPool: (size) => (model, weights) => createNodeWorkerPool({ size, model, weights }),
    tokenWorker: nodeTokenWorkerOn(engine.name as NodeEngineName),
    // A token run's checkpoint replaces the imitation warm start's result: no need to train it again.
    resume: resume?.checkpoint,
    warmStartCache: values['shipped-warm-start'] ? shippedWarmStarts() : undefined,
    onWarmStart: async (r, total) => {
      s.progress.phase = 'warm start';
      s.progress.warmStep = r.step + 1;
      s.progress.warmSteps = total;
      if (!values.quiet && (r.step % 50 === 0 || r.step === total - 1)) {
        console.log(`warm start ${String(r.step + 1).padStart(5)}/${total}  ${r.wallS.toFixed(1).padStart(6)}s  ce ${r.ceLoss.toFixed(3)}  p(expert token) ${r.targetProb.toFixed(3)}`);
      }
      await letSignalsIn();
    },
  });
  s.progress.phase = 'training';
  return trainer;
}

/** Restores a resumed run's checkpoint (releasing the trainer if it is refused) and starts the folder's files. */
async function startFolder(setup: TrainSetup, trainer: RunTrainer, files: RunFiles): Promise<void> {
  const { resume, values } = setup;
  if (!resume) {
    if (!trainer.canCheckpoint && !values.quiet) console.log('note: this trainer keeps no checkpoints, so this run cannot be resumed');
    return;
  }
  try {
    await trainer.restore(resume.checkpoint);
  } catch (e) {
    await trainer.release();
    throw new Error(`--resume ${values.resume}: ${(e as Error).message}`, { cause: e });
  }
  files.writeStart();
  const dropped = resume.dropped > 0 ? ` (${resume.dropped} later metric rows dropped: they are trained again)` : '';
  console.log(`resuming ${values.resume} from its checkpoint at iteration ${setup.startAt}${dropped}`);
}

/** Prints what trains where, and the reward code's short hash (the Runs view shows the same for this code); returns the hash. */
async function announce(setup: TrainSetup, engine: Engine, versions: RunFiles['versions'], inForce: CodeVersion | null): Promise<string | null> {
  const { config, resume, out } = setup;
  const sched = config.rollout.mode === 'async' ? `async, staleness ≤ ${config.rollout.maxStaleness}` : 'sync';
  const pool = config.rollout.workers > 0 ? `${config.rollout.workers} rollout workers` : 'in-thread rollouts';
  console.log(`training ${config.id} (${makeEnv(config.env.id, config.env.kwargs).spec.title} [${config.env.id}], ${config.algo.algo}; ${sched}, ${pool}) on ${engine.name} for ${config.iterations} iterations -> ${out}`);
  const codeHash = await rewardCodeHash(inForce?.code ?? '');
  if (codeHash && inForce) {
    const which = versions.length > 1 || resume ? `v${inForce.version} of ${versions.length}, in force since iteration ${inForce.iteration}; ${REWARD_VERSIONS_FILE} lists every version` : `config.json's reward.code`;
    console.log(`reward code ${codeHash} (${which}; SHA-256, first ${CODE_HASH_CHARS} hex digits; the Runs view shows the same)`);
  }
  return codeHash;
}

/** One session of the run: set up the trainer, train, write the outputs, say how it ended; resolves the exit status. */
async function trainSession(setup: TrainSetup, s: Session): Promise<number> {
  const { config, resume, out, evalN } = setup;
  const files = runFiles(setup, s);
  if (!resume) files.writeStart();
  // A reward module that does not load, or whose terms throw or loop on a dry run, stops here, before training.
  // A resumed run scores on with the version in force at its checkpoint, numbered as before.
  const inForce = resume ? resume.rewardInForce : (files.versions[0] ?? null);
  s.rewardLab = await rewardLabFor({ ...config, reward: { ...config.reward, code: inForce?.code ?? '' } }, (m) => console.warn(`warning: ${m}`), inForce?.version ?? 1);
  const engine = await chooseEngine(config, setup.values.engine);
  const trainer = await buildTrainer(setup, s, engine);
  await startFolder(setup, trainer, files);
  const codeHash = await announce(setup, engine, files.versions, inForce);
  const evaluate = makeEvaluator(trainer, evalN, out);
  const evals = evalN > 0 ? [await evaluate('before RL')] : [];
  const t0 = performance.now();
  let run: TrainOutcome | undefined;
  try {
    run = await trainLoop(setup, s, trainer, files, t0);
    if (run.stopped.reason === 'success') console.log(`success ≥ ${config.stopAtSuccess} over the last 3 iterations: stopping`);
    if (evalN > 0 && run.stopped.reason !== 'error') {
      // A stop signal wants the process gone soon: the held-out evaluation is left for later.
      if (s.stopSignal) console.log(`eval (after RL): skipped (stopped by ${s.stopSignal}); run it later with --resume and --eval`);
      else {
        evals.push(await evaluate('after RL'));
        writeFileSync(join(out, 'eval.json'), JSON.stringify(evals, null, 2) + '\n');
      }
    }
  } finally {
    await writePolicy(setup, trainer, setup.startAt + (run?.stopped.iterations ?? 0), codeHash);
    await trainer.release();
    s.rewardLab?.scorer.close();
  }
  return reportEnd(setup, s, run!, files, t0);
}

/** policy.onnx and policy.json: the trained policy and what it needs beside it to be used elsewhere. */
async function writePolicy(setup: TrainSetup, trainer: RunTrainer, done: number, codeHash: string | null): Promise<void> {
  const weights = await trainer.getWeights();
  // Token policies export the KV-cache decode graph (one token per call), what a rollout runs.
  const graph = trainer.model.kind === 'transformer' ? 'decode' : 'full';
  writeFileSync(join(setup.out, 'policy.onnx'), exportPolicyOnnx(trainer.model, weights, { batch: 1, graph }));
  // Its inputs, how to build them, the actions.
  writeFileSync(join(setup.out, 'policy.json'), JSON.stringify(policyCard(setup.config, { iteration: done, rewardCodeHash: codeHash }), null, 2) + '\n');
}

/** How the training loop ended, and what the outputs hold because of it. */
interface TrainOutcome {
  stopped: TrainerEventOf<'stopped'>;
  /** The iteration's index when a stop signal interrupted its scoring (not a failure of the run). */
  droppedIteration: number | null;
  /** An error stopped the run. */
  failed: boolean;
  /** The iteration of the checkpoint written after an error (null: none was). */
  savedAfterError: number | null;
  codeEnvRun: boolean;
}

/** The lines each iteration prints and appends (metrics.jsonl, trajectories.jsonl), and what an error event means. */
function listen(setup: TrainSetup, s: Session, files: RunFiles, t0: number, o: { droppedIteration: number | null; failed: boolean }): TrainerEvents {
  const { config, values, naming } = setup;
  const lastWall = setup.resume?.metrics.at(-1)?.wall_s;
  /** Training seconds before this session (a resumed run's wall_s continues). */
  const wallOffset = lastWall !== undefined && Number.isFinite(lastWall) ? lastWall : 0;
  const events = new TrainerEvents();
  // Staged runs: a line where each stage begins (`pipeline/stage` is 1-based).
  const starts = stageStarts(config.stages);
  let shownStage = 0;
  events.on('iteration', (e) => {
    const m = e.metrics;
    const elapsed = (performance.now() - t0) / 1000;
    appendFileSync(files.metricsPath, JSON.stringify(renameRow({ iteration: e.iteration, wall_s: Number((wallOffset + elapsed).toFixed(3)), ...m }, naming)) + '\n');
    s.progress.iterations = e.iteration + 1;
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
    for (const ep of e.episodes) appendFileSync(files.trajPath, JSON.stringify(trajectoryLine(e.iteration, ep.episode.envId, ep.episode, ep.reward, ep.advantage)) + '\n');
  });
  events.on('error', (e) => {
    if (s.stopSignal && (e.error instanceof ScoringInterrupted || (e.error as Error)?.name === 'ScoringInterrupted')) o.droppedIteration = e.iteration;
    else {
      o.failed = true;
      console.error(`error in iteration ${e.iteration}: ${e.message}`);
    }
  });
  return events;
}

/** Trains the session's iterations, checkpointing as it goes; after it, checkpoint.json holds the state a --resume should continue from. */
async function trainLoop(setup: TrainSetup, s: Session, trainer: RunTrainer, files: RunFiles, t0: number): Promise<TrainOutcome> {
  const { config, resume, checkpointEvery } = setup;
  /**
   * With user reward terms a stop signal may drop the iteration being scored: the outputs then
   * come from the last finished one, whose checkpoint is kept here (taken between iterations).
   */
  // A code env can fail in any iteration (its sandbox stopped: out of memory, past its deadline),
  // so its run keeps the last finished iteration's checkpoint too, and writes it on an error.
  const codeEnvRun = config.env.id.startsWith('code/') || isRemoteEnv(config.env.id);
  const keepLastGood = (s.rewardLab !== undefined || codeEnvRun) && trainer.canCheckpoint;
  let lastGood: Checkpoint | null = keepLastGood ? (resume ? resume.checkpoint : await trainer.checkpoint()) : null;
  const o = { droppedIteration: null as number | null, failed: false };
  const events = listen(setup, s, files, t0, o);
  let stopped = await runTraining(trainer, events, {
    iterations: config.iterations - setup.startAt,
    stopAtSuccess: config.stopAtSuccess,
    trajectories: setup.keepTraj,
    shouldStop: () => s.stopSignal !== null,
    afterIteration: async (it) => {
      const periodic = trainer.canCheckpoint && checkpointEvery > 0 && (it + 1) % checkpointEvery === 0;
      if (!periodic && !keepLastGood) return;
      const cp = await trainer.checkpoint();
      if (keepLastGood) lastGood = cp;
      if (periodic) files.writeCheckpoint(cp);
    },
  });
  let savedAfterError: number | null = null;
  if (o.droppedIteration !== null) {
    // The signal stopped the scoring of an iteration: the run is as the last finished one left it
    // (scoring comes before any update), and that is what the outputs hold.
    stopped = { ...stopped, reason: 'requested' as const };
    if (lastGood) files.writeCheckpoint(lastGood);
  } else if (stopped.reason !== 'error' && trainer.canCheckpoint) {
    // At the end and on a stop signal; after an error the failed step's state is not one to resume from:
    files.writeCheckpoint(await trainer.checkpoint());
  } else if (stopped.reason === 'error' && lastGood) {
    // the last finished iteration's is (kept for code envs and reward code; otherwise the last periodic one stays).
    files.writeCheckpoint(lastGood);
    savedAfterError = (lastGood as Checkpoint).iteration;
  }
  return { stopped, ...o, savedAfterError, codeEnvRun };
}

/** The last line: what happened, what was written where, how to go on; returns the exit status. */
function reportEnd(setup: TrainSetup, s: Session, run: TrainOutcome, files: RunFiles, t0: number): number {
  const { config, out } = setup;
  const { stopped, droppedIteration } = run;
  /** Iterations of the run so far (a resumed run counts from its checkpoint). */
  const iterations = setup.startAt + stopped.iterations;
  const wrote = `config.json, metrics.jsonl, trajectories.jsonl, policy.onnx, policy.json${existsSync(files.checkpointPath) ? ', checkpoint.json' : ''}${files.versions.length > 0 ? `, ${REWARD_VERSIONS_FILE}` : ''}`;
  if (stopped.reason === 'error') {
    const cp = run.savedAfterError !== null ? `checkpoint.json: the state after iteration ${run.savedAfterError - 1}, the last finished one; continue with npm run train -- --resume ${out}` : 'a checkpoint.json is the last one saved before the error';
    const what = run.failed && run.codeEnvRun ? ` (the ${isRemoteEnv(config.env.id) ? 'remote' : 'code'} env failed, see the error above)` : '';
    console.error(`stopped after ${iterations} iterations${what}; wrote ${wrote} (policy.onnx: the last good weights; ${cp}) to ${out}`);
    return 1;
  }
  if (stopped.reason === 'requested') {
    const sig: StopSignal = s.stopSignal ?? 'SIGINT';
    const dropped = droppedIteration !== null ? ` (iteration ${iterations} was being scored by the reward terms: dropped, it is trained again on resume)` : '';
    console.log(`interrupted${sig === 'SIGINT' ? '' : ` by ${sig}`} at iteration ${iterations}${dropped}; wrote ${wrote} to ${out}; continue with: npm run train -- --resume ${out}`);
    return STOP_SIGNALS[sig];
  }
  console.log(`done: ${iterations} iterations (${stopped.iterations} this session) in ${((performance.now() - t0) / 1000).toFixed(1)} s; wrote ${wrote} to ${out}`);
  return 0;
}

runWhenScript(import.meta.url, main);
