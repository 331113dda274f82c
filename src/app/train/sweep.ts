/**
 * The Train view's Sweep: the form (seeds × up to two fields, each with a list of values), its
 * checks, and the sweep in progress (app/train/sweepRunner.ts runs it). "Run N seeds" is a sweep
 * of no field. Its own store: the single run's state is untouched by a sweep.
 */
import { create } from 'zustand';
import { MAX_SWEEP_FIELDS, parseSeeds, parseValues, SweepError, sweepConfigs, sweepJobs, type SweepField } from '../../core/runs/sweep.ts';
import type { RunConfig } from '../../core/presets/schema.ts';
import { browserRunStore } from '../../runtime/storage/browser.ts';
import { setField, validate } from './config.ts';
import { FIELDS, type DraftConfig, type FieldDef } from './fields.ts';
import { SweepRunner, type SweepRunJob, type SweepRunView, type SweepWorker } from './sweepRunner.ts';
import { clearSweep, interruptedSweep, loadSweep, saveSweep, saveSweepStates, type InterruptedSweep } from './sweepSaved.ts';

/** Most seeds one "Run N seeds" trains (a sweep of no field). */
export const MAX_SEEDS = 10;

/** Most runs one sweep starts: each holds a training worker while it runs and a saved run after (~1 MB with its checkpoint). */
export const MAX_SWEEP_RUNS = 48;

/** Runs at once: the cores the machine has to spare, one left for the page (at least 1). */
export function sweepSlots(cores = globalThis.navigator?.hardwareConcurrency): number {
  return Math.max(1, Math.floor(Number.isFinite(cores) ? cores! : 2) - 1);
}

/** Fields a sweep may vary for this draft: the form's numbers, integers, choices and switches shown for it (not the seed: that is the seeds axis). */
export function sweepableFields(d: DraftConfig): FieldDef[] {
  return FIELDS.filter((f) => ['int', 'number', 'select', 'bool'].includes(f.input.kind) && f.path !== 'seed' && f.path !== 'backend' && !f.groupFor && (!f.when || f.when(d)));
}

/** A field's values as the form's input kind reads them; the first bad one throws, named. */
function checkValues(f: FieldDef, values: unknown[]): unknown[] {
  const input = f.input;
  return values.map((v) => {
    const bad = (why: string) => new SweepError(`${f.label} (${f.path}): ${JSON.stringify(v)} ${why}`);
    if (input.kind === 'int' || input.kind === 'number') {
      if (typeof v !== 'number' || !Number.isFinite(v)) throw bad('is not a number');
      if (input.kind === 'int' && !Number.isInteger(v)) throw bad('is not a whole number');
      if (input.min !== undefined && v < input.min) throw bad(`is below its least value, ${input.min}`);
      if (input.max !== undefined && v > input.max) throw bad(`is above its largest value, ${input.max}`);
    } else if (input.kind === 'bool') {
      if (typeof v !== 'boolean') throw bad('is neither true nor false');
    } else if (input.kind === 'select') {
      if (!input.options.some((o) => o.value === v)) throw bad(`is not one of ${input.options.map((o) => o.value).join(', ')}`);
    }
    return v;
  });
}

/** One row of the form: a field's path and its values as typed. */
export interface SweepFormField {
  path: string;
  values: string;
}

export interface SweepForm {
  fields: SweepFormField[];
  seeds: string;
}

export type SweepPlan = { ok: true; jobs: SweepRunJob[]; configs: number; seeds: number[]; slots: number } | { ok: false; message: string };

/** The runs the form asks for (each a validated config), or what is wrong with it. Empty rows are ignored. */
export function planSweep(d: DraftConfig, form: SweepForm, slots = sweepSlots()): SweepPlan {
  try {
    const v = validate(d);
    if (!v.ok) throw new SweepError('fix the highlighted settings first: the sweep starts from them');
    const seeds = parseSeeds(form.seeds);
    if (seeds.length === 0) throw new SweepError('seeds: name at least one (e.g. 1-4)');
    const sweepable = sweepableFields(d);
    const rows = form.fields.filter((f) => f.path.trim() !== '' || f.values.trim() !== '');
    if (rows.length > MAX_SWEEP_FIELDS) throw new SweepError(`at most ${MAX_SWEEP_FIELDS} fields per sweep (seeds are the third axis)`);
    const fields: SweepField[] = rows.map((r) => {
      const path = r.path.trim();
      if (path === '') throw new SweepError(`values ${JSON.stringify(r.values.trim())} have no field: choose one`);
      const f = sweepable.find((x) => x.path === path);
      if (!f) throw new SweepError(`${path} cannot be swept${FIELDS.some((x) => x.path === path) ? ' for this config (a list, an environment, a stage or a field this config does not use)' : ' (no such field)'}; choose one of the list`);
      if (r.values.trim() === '') throw new SweepError(`${f.label} (${path}): give its values, separated by commas (e.g. 1e-3, 3e-3)`);
      return { path, values: checkValues(f, parseValues(path, r.values)) };
    });
    const count = fields.reduce((n, f) => n * f.values.length, 1);
    const total = count * seeds.length;
    if (total > MAX_SWEEP_RUNS) throw new SweepError(`${count} config(s) × ${seeds.length} seed(s) = ${total} runs, more than ${MAX_SWEEP_RUNS}: fewer values or seeds (or npm run sweep, which has no cap)`);
    // The form's rule for each value: a swept algorithm brings its own defaults, as switching it in the form does.
    const configs = sweepConfigs(v.config as unknown as Record<string, unknown>, fields, v.config.id, (c, path, value) => setField(c as unknown as DraftConfig, path, value) as unknown as Record<string, unknown>);
    const jobs = sweepJobs(configs, seeds).map((j) => ({ ...j, config: j.config as unknown as RunConfig }));
    return { ok: true, jobs, configs: configs.length, seeds, slots };
  } catch (e) {
    if (e instanceof SweepError) return { ok: false, message: e.message };
    throw e;
  }
}

export interface SweepState {
  form: SweepForm;
  /** The sweep shown (running or ended), null before the first. */
  runs: SweepRunView[] | null;
  status: 'idle' | 'running' | 'stopping' | 'done';
  /** The tag its runs carry. */
  tag: string | null;
  /** Runs at once. */
  slots: number;
  /** Slots lent to the tab's single run while it trains (SweepDeps.lent). */
  lent: number;
  /** Wall time from start to end, s (null while it runs). */
  wallS: number | null;
  /** A sweep a reload interrupted (read from storage as the page opens): what it left, to resume or discard. */
  interrupted: InterruptedSweep | null;
  setForm(patch: Partial<SweepForm>): void;
  setField(i: number, patch: Partial<SweepFormField>): void;
}

export const useSweep = create<SweepState>((set, get) => ({
  form: { fields: [{ path: '', values: '' }, { path: '', values: '' }], seeds: '1-4' },
  runs: null,
  status: 'idle',
  tag: null,
  slots: sweepSlots(),
  lent: 0,
  wallS: null,
  interrupted: (() => {
    const saved = loadSweep();
    return saved ? interruptedSweep(saved) : null;
  })(),
  setForm: (patch) => set({ form: { ...get().form, ...patch } }),
  setField: (i, patch) => set({ form: { ...get().form, fields: get().form.fields.map((f, j) => (j === i ? { ...f, ...patch } : f)) } }),
}));

let current: SweepRunner | null = null;

/**
 * Starts the plan's runs (`plan.slots` at a time); resolves when the sweep ended or was stopped,
 * with its saved runs' ids. `notify` tells the person about storage problems and the end.
 */
/** Slots the sweep lends to other training in the tab: how many now, and a way to hear when that changes. */
export interface LentSlots {
  now(): number;
  /** Calls `onChange` when `now()` may have changed; returns the unsubscribe. */
  subscribe(onChange: () => void): () => void;
}

export async function runSweep(plan: Extract<SweepPlan, { ok: true }>, label: string, notify: (level: 'info' | 'warning', text: string) => void, newWorker: (name: string) => SweepWorker, lent?: LentSlots, resumeTag?: string): Promise<string[]> {
  if (current) return [];
  const tag = resumeTag ?? `sweep ${new Date().toISOString().slice(0, 16).replace('T', ' ')} · ${label}`;
  const t0 = performance.now();
  // Kept for a reload: the runs once, each run's state as it changes (sweepSaved.ts). A new sweep replaces an interrupted one.
  if (!saveSweep({ tag, slots: plan.slots, jobs: plan.jobs, states: plan.jobs.map(() => 'queued') })) {
    notify('warning', 'This sweep could not be kept in the browser’s storage (full or blocked): a reload of the page would stop it without a way to resume the runs not yet trained.');
  }
  let kept = '';
  const runner = new SweepRunner(tag, plan.jobs, { newWorker, store: browserRunStore(), hooks: { onProblem: (m) => notify('warning', m), onRecovered: (m) => notify('info', m) }, slots: plan.slots, lent: lent?.now }, (runs) => {
    const states = runs.map((r) => r.state);
    if (states.join() !== kept) saveSweepStates(states);
    kept = states.join();
    useSweep.setState({ runs });
  });
  current = runner;
  useSweep.setState({ runs: runner.views.map((v) => ({ ...v })), status: 'running', tag, slots: plan.slots, lent: lent?.now() ?? 0, wallS: null, interrupted: null });
  const unsubscribe = lent?.subscribe(() => {
    useSweep.setState({ lent: lent.now() });
    runner.slotsChanged();
  });
  try {
    await runner.run();
  } finally {
    unsubscribe?.();
    current = null;
    // It ended (or Stop dropped its queue, as asked): nothing to resume after a reload.
    clearSweep();
    useSweep.setState({ status: 'done', wallS: (performance.now() - t0) / 1000 });
  }
  const failed = runner.views.filter((v) => v.state === 'failed').length;
  const done = runner.views.filter((v) => v.state === 'done').length;
  notify(failed ? 'warning' : 'info', `Sweep ended: ${done} of ${plan.jobs.length} runs finished${failed ? `, ${failed} failed (the table says why)` : ''}. Its runs are saved with the tag "${tag}".`);
  return runner.recordIds;
}

/** The plan that trains what an interrupted sweep left: the runs cut off (from their start) and those not started, in their order. */
export function resumePlan(x: InterruptedSweep, slots = sweepSlots()): Extract<SweepPlan, { ok: true }> {
  const jobs = [...x.cut, ...x.queued];
  return { ok: true, jobs, configs: new Set(jobs.map((j) => j.configKey ?? j.configName)).size, seeds: [...new Set(jobs.map((j) => j.seed))], slots };
}

/** Forgets an interrupted sweep (the person chose not to resume it; its saved runs stay in Runs). */
export function discardInterrupted(): void {
  clearSweep();
  useSweep.setState({ interrupted: null });
}

/** Stops the sweep in progress: the runs in flight stop after their iteration (what they recorded stays), the queue is dropped. */
export async function stopSweep(): Promise<void> {
  if (!current) return;
  useSweep.setState({ status: 'stopping' });
  await current.stop();
}
