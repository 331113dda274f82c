/**
 * Does each lesson step's setup produce its own check? Trains every step headless, exactly as
 * the browser would (its setup through the Train view's config code, createTrainer, ort-web WASM
 * by default), feeds each iteration's metrics to the step's check and stops when it is done or
 * missed (or at --max iterations when it has no `within`):
 *
 *   npx tsx bench/lessons/run.ts [lesson-id[:step] ...] [--engine ort-web-wasm|ort-node] [--max 60] [--json] [--quiet]
 *                                 [--set path=value ...]   (tries a change on top of each step's setup)
 *
 * One line per step: done at iteration k (or missed / not reached), wall seconds, and the
 * check's readings at the end.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createTrainer } from '../../src/core/trainer/createTrainer.ts';
import { rewardLabFor } from '../../src/runtime/rewardSandbox/index.ts';
import { loadNodeEngine, type NodeEngineName } from '../../src/runtime/engine/node.ts';
import { createNodeWorkerPool } from '../../src/runtime/pool/node.ts';
import { nodeTokenWorkerOn } from '../../src/runtime/tokenWorker/node.ts';
import { loadPresets } from '../../src/app/train/config.ts';
import { LESSONS } from '../../src/app/lessons/index.ts';
import { configForSetup } from '../../src/app/lessons/setup.ts';
import { describeReading, evaluateCheck, type CheckStatus, type Metrics } from '../../src/app/lessons/check.ts';
import { isMapCheck, type Step } from '../../src/app/lessons/schema.ts';

export interface StepRun {
  lesson: string;
  step: number;
  title: string;
  state: CheckStatus['state'];
  doneAt: number | null;
  iterations: number;
  wallS: number;
  readings: string[];
  /** Per iteration: the metrics the check reads. */
  trace: Record<string, number>[];
}

export function presetsFromDisk(dir = 'presets'): ReturnType<typeof loadPresets>['presets'] {
  const raw = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(`${dir}/${f}`, 'utf8')) as unknown);
  return loadPresets(raw).presets;
}

/** Trains one step until its check is done or missed, or `max` iterations. */
export async function runStep(
  lessonId: string,
  index: number,
  step: Step,
  o: {
    engine?: NodeEngineName;
    max?: number;
    log?: (s: string) => void;
    extra?: [string, unknown][];
    /** Sees every iteration's metrics (with `it`, 1-based). */
    observe?: (m: Metrics) => void;
    /** Train to the step's `within` (or `max`) even once the check is done. */
    full?: boolean;
  } = {},
): Promise<StepRun> {
  const check = step.check;
  if (isMapCheck(check)) throw new Error(`${lessonId} step ${index + 1}: a check on the Studio's map, read as the map is painted, not by training`);
  const r = configForSetup({ ...step.setup, overrides: [...step.setup.overrides, ...((o.extra ?? []) as Step['setup']['overrides'])] }, presetsFromDisk());
  if (!r.ok) throw new Error(`${lessonId} step ${index + 1}: ${r.problems.join('; ')}`);
  const engineName = o.engine ?? 'ort-web-wasm';
  const engine = await loadNodeEngine(engineName);
  const t0 = performance.now();
  const rewardLab = await rewardLabFor(r.config);
  const trainer = await createTrainer(r.config, engine, {
    rewardLab,
    workerPool: (size) => (model, weights) => createNodeWorkerPool({ size, model, weights }),
    tokenWorker: nodeTokenWorkerOn(engineName),
  });
  const stream: Metrics[] = [];
  const trace: Record<string, number>[] = [];
  const max = check.within ?? o.max ?? 60;
  let status = evaluateCheck(check, stream);
  try {
    for (let i = 0; i < max; i++) {
      const rep = await trainer.step();
      const m: Metrics = { ...(rep.metrics as Metrics), it: i + 1 };
      stream.push(m);
      o.observe?.(m);
      trace.push(Object.fromEntries([['it', i + 1], ...check.all.map((c) => [c.metric, m[c.metric] ?? NaN]), ['episode/success_rate', m['episode/success_rate'] ?? NaN]]));
      status = evaluateCheck(check, stream);
      o.log?.(`  it ${i + 1}: ${status.readings.map(describeReading).join(', ')}; success ${(m['episode/success_rate'] ?? NaN).toFixed(2)}, entropy ${(m['actor/entropy'] ?? NaN).toFixed(2)} [${status.state} ${status.streak}/${status.need}]`);
      if ((status.state === 'done' && !o.full) || status.state === 'missed') break;
    }
  } finally {
    await trainer.release();
    rewardLab?.scorer.close();
  }
  return {
    lesson: lessonId,
    step: index + 1,
    title: step.title,
    state: status.state,
    doneAt: status.doneAt,
    iterations: stream.length,
    wallS: Math.round((performance.now() - t0) / 100) / 10,
    readings: status.readings.map(describeReading),
    trace,
  };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { engine: { type: 'string' }, max: { type: 'string' }, json: { type: 'boolean' }, quiet: { type: 'boolean' }, set: { type: 'string', multiple: true } } });
  const extra = (values.set ?? []).map((kv): [string, unknown] => {
    const [k, v] = kv.split('=');
    return [k, v === 'true' ? true : v === 'false' ? false : Number.isFinite(Number(v)) ? Number(v) : v];
  });
  const want = positionals.map((p) => {
    const [id, s] = p.split(':');
    return { id, step: s ? Number(s) : null };
  });
  const rows: StepRun[] = [];
  for (const lesson of LESSONS.lessons) {
    for (const [i, step] of lesson.steps.entries()) {
      if (want.length && !want.some((w) => w.id === lesson.id && (w.step === null || w.step === i + 1))) continue;
      // A check on the Studio's map is read as the map is painted: nothing to train.
      if (isMapCheck(step.check)) continue;
      console.error(`${lesson.id} step ${i + 1}: ${step.title} — check: ${step.check.says}`);
      const row = await runStep(lesson.id, i, step, { engine: values.engine as NodeEngineName | undefined, max: values.max ? Number(values.max) : undefined, log: values.quiet ? undefined : (s) => console.error(s), extra });
      console.error(`${row.lesson}:${row.step} ${row.state}${row.doneAt ? ` at iteration ${row.doneAt}` : ''} after ${row.iterations} iterations, ${row.wallS} s: ${row.readings.join(', ')}`);
      rows.push(row);
    }
  }
  if (values.json) console.log(JSON.stringify(rows.map(({ trace: _t, ...r }) => r)));
  process.exit(rows.every((r) => r.state === 'done') ? 0 : 1);
}

if (process.argv[1]?.endsWith('run.ts')) void main();
