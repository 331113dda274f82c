/**
 * The Train view's Sweep tab: seeds × up to two fields of the current settings, each with a list
 * of values; the runs' progress table (live); Stop; and, once it ended, "Compare these runs".
 */
import { useMemo } from 'react';
import { useStore } from '../store.ts';
import { sweepWorker } from './client.ts';
import { discardInterrupted, MAX_SWEEP_RUNS, planSweep, resumePlan, runSweep, stopSweep, sweepableFields, useSweep, type SweepPlan } from './sweep.ts';
import { interruptedText } from './sweepSaved.ts';
import type { SweepRunView } from './sweepRunner.ts';
import type { RunStatus } from './trainState.ts';

const pct = (x: number | null) => (x === null ? '–' : `${Math.round(x * 100)}%`);
const f2 = (x: number | null) => (x === null ? '–' : x.toFixed(2));

/** Starts a planned sweep, shows the tab, and selects its runs for Compare once it ended. */
export async function startSweep(plan: Extract<SweepPlan, { ok: true }>, label: string, resumeTag?: string): Promise<void> {
  const { notify, setTab } = useStore.getState();
  setTab('sweep');
  await runSweep(
    plan,
    label,
    notify,
    sweepWorker,
    {
      now: () => (singleRunTrains(useStore.getState().status) ? 1 : 0),
      subscribe: (onChange) => useStore.subscribe((s, prev) => singleRunTrains(s.status) !== singleRunTrains(prev.status) && onChange()),
    },
    resumeTag,
  );
}

/** What a reload interrupted: said, with Resume (the runs cut off, from their start, and those not started) and Discard. */
function Interrupted({ busy }: { busy: boolean }) {
  const x = useSweep((s) => s.interrupted);
  if (!x) return null;
  const left = x.cut.length + x.queued.length;
  return (
    <div className="sweep-interrupted" role="status" data-testid="sweep-interrupted" data-left={left}>
      <p>{interruptedText(x)}</p>
      <div className="sweep-row">
        {left > 0 && (
          <button type="button" className="btn btn-primary" data-testid="sweep-resume" aria-disabled={busy || undefined} onClick={() => !busy && void startSweep(resumePlan(x), x.tag, x.tag)}>
            Resume: train the {left} run{left === 1 ? '' : 's'} left{x.cut.length ? ' (those cut off from their start)' : ''}
          </button>
        )}
        <button type="button" className="btn" data-testid="sweep-discard" onClick={discardInterrupted}>
          Discard
        </button>
      </div>
    </div>
  );
}

/** The Train tab's single run holds cores: it is building, training or finishing an iteration. */
const singleRunTrains = (s: RunStatus) => s === 'starting' || s === 'running' || s === 'stepping' || s === 'pausing';

/** Opens Runs with the sweep's saved runs ticked for Compare (its statistics group them by config). */
export async function compareSweep(): Promise<void> {
  const ids = (useSweep.getState().runs ?? []).flatMap((r) => (r.recordId && r.state !== 'queued' ? [r.recordId] : []));
  await useStore.getState().selectForCompare(ids);
}

function SweepForm({ plan, busy }: { plan: SweepPlan; busy: boolean }) {
  const form = useSweep((s) => s.form);
  const { setField, setForm } = useSweep.getState();
  const draft = useStore((s) => s.draft);
  const options = useMemo(() => sweepableFields(draft), [draft]);
  return (
    <form
      className="sweep-form"
      data-testid="sweep-form"
      aria-describedby="sweep-plan"
      onSubmit={(e) => {
        e.preventDefault();
        if (plan.ok && !busy) void startSweep(plan, draft.id);
      }}
    >
      <datalist id="sweep-field-paths">
        {options.map((f) => (
          <option key={f.path} value={f.path}>
            {f.label}
          </option>
        ))}
      </datalist>
      {form.fields.map((f, i) => (
        <div className="sweep-row" key={i}>
          <label>
            Field {i + 1}
            <input list="sweep-field-paths" data-testid={`sweep-field-${i}`} value={f.path} placeholder={i === 0 ? 'algo.lr' : '(optional)'} onChange={(e) => setField(i, { path: e.target.value })} spellCheck={false} autoComplete="off" />
          </label>
          <label className="sweep-values">
            Values
            <input data-testid={`sweep-values-${i}`} value={f.values} placeholder={i === 0 ? '1e-3, 3e-3' : 'v1, v2, …'} onChange={(e) => setField(i, { values: e.target.value })} spellCheck={false} autoComplete="off" />
          </label>
        </div>
      ))}
      <div className="sweep-row">
        <label>
          Seeds
          <input data-testid="sweep-seeds" value={form.seeds} placeholder="1-4" onChange={(e) => setForm({ seeds: e.target.value })} spellCheck={false} autoComplete="off" />
        </label>
        <button type="submit" className="btn btn-primary" data-testid="sweep-start" aria-disabled={!plan.ok || busy || undefined}>
          Start sweep
        </button>
      </div>
      <p id="sweep-plan" className={plan.ok ? 'muted small' : 'sweep-problem small'} data-testid="sweep-plan" role={plan.ok ? undefined : 'alert'}>
        {plan.ok
          ? `${plan.configs} config${plan.configs > 1 ? 's' : ''} × ${plan.seeds.length} seed${plan.seeds.length > 1 ? 's' : ''} = ${plan.jobs.length} runs, ${Math.min(plan.slots, plan.jobs.length)} at a time (this machine's cores less one for the page); the rest wait. At most ${MAX_SWEEP_RUNS} runs.`
          : plan.message}
      </p>
    </form>
  );
}

function RunRow({ r }: { r: SweepRunView }) {
  return (
    <tr data-testid="sweep-run" data-name={r.name} data-state={r.state} data-iteration={r.iteration}>
      <td className="mono">{r.name}</td>
      <td>
        {r.iteration} / {r.total}
      </td>
      <td>{pct(r.success)}</td>
      <td>{f2(r.reward)}</td>
      <td className={`sweep-state sweep-${r.state}`} title={r.error ?? undefined}>
        {r.state}
        {r.error && <span className="small"> · {r.error}</span>}
      </td>
    </tr>
  );
}

function SweepProgress() {
  const runs = useSweep((s) => s.runs);
  const status = useSweep((s) => s.status);
  const wallS = useSweep((s) => s.wallS);
  const tag = useSweep((s) => s.tag);
  const lent = useSweep((s) => s.lent);
  const slots = useSweep((s) => s.slots);
  if (!runs) return null;
  const count = (st: SweepRunView['state']) => runs.filter((r) => r.state === st).length;
  return (
    <section className="sweep-progress" aria-label="Sweep progress" data-testid="sweep-progress" data-status={status} data-running={count('running')} data-wall-s={wallS ?? ''}>
      <div className="sweep-head">
        <h4>
          {status === 'done' ? 'Sweep ended' : status === 'stopping' ? 'Stopping…' : 'Sweep running'}: {count('done')} done, {count('running')} running, {count('queued')} queued
          {count('failed') > 0 && `, ${count('failed')} failed`}
          {wallS !== null && ` · ${wallS.toFixed(1)} s`}
        </h4>
        {status === 'running' && (
          <button type="button" className="btn" data-testid="sweep-stop" onClick={() => void stopSweep()}>
            Stop sweep
          </button>
        )}
        {status === 'done' && runs.some((r) => r.recordId) && (
          <button type="button" className="btn btn-primary" data-testid="sweep-compare" onClick={() => void compareSweep()}>
            Compare these runs
          </button>
        )}
      </div>
      {lent > 0 && status === 'running' && (
        <p className="muted small" data-testid="sweep-lent">
          The single run above is training, so the sweep starts at most {Math.max(1, slots - lent)} at a time until it stops (runs already going carry on).
        </p>
      )}
      {tag && <p className="muted small">Each run is saved in Runs, tagged “{tag}”.</p>}
      <div className="stats-scroll" tabIndex={0} role="region" aria-label="Runs of the sweep">
        <table className="diff-table sweep-table" data-testid="sweep-table">
          <caption className="visually-hidden">Each run of the sweep: its iterations, latest success and reward, and state</caption>
          <thead>
            <tr>
              <th>run</th>
              <th>iteration</th>
              <th>success</th>
              <th>reward</th>
              <th>state</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <RunRow key={`${r.configKey} ${r.seed}`} r={r} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function SweepPanel() {
  const form = useSweep((s) => s.form);
  const slots = useSweep((s) => s.slots);
  const status = useSweep((s) => s.status);
  const draft = useStore((s) => s.draft);
  const plan = useMemo(() => planSweep(draft, form, slots), [draft, form, slots]);
  const busy = status === 'running' || status === 'stopping';
  return (
    <div className="sweep panel" data-testid="sweep-panel">
      <p className="muted small">
        Trains the current settings once per combination of the values below and each seed, {slots} at a time in training workers of their own (one fewer while the single run above trains, so the two do not crowd the same cores). Each run is saved in
        Runs, named after what it varies (<span className="mono">lr=0.003 · seed 2</span>), as <span className="mono">npm run sweep</span> names it.
      </p>
      <Interrupted busy={busy} />
      <SweepForm plan={plan} busy={busy} />
      <SweepProgress />
    </div>
  );
}
