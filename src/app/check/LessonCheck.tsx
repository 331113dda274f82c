/**
 * The host's one-click check: times a few iterations of each distinct lesson setup on this laptop
 * and prints a verdict per lesson (lessonEstimate.ts for the arithmetic, lessonRun.ts for the
 * timing). A second run shows its figures beside the first, so a host sees how steady they are.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { detectBackend } from '../../runtime/backend.ts';
import { LESSONS } from '../lessons/index.ts';
import { loadPresets } from '../train/config.ts';
import { estimateLessons, formatDuration, planLessons, READY_S, spread, UNSTEADY_SPREAD, type LessonEstimate, type ShapeTiming } from './lessonEstimate.ts';
import { ITERATIONS_PER_SHAPE, MIN_ITERATIONS, SHAPE_ITER_BUDGET_S, timeShapes, WARM_STEPS_TIMED, type ShapeResult } from './lessonRun.ts';

const rawPresets = Object.values(import.meta.glob('../../../presets/*.json', { eager: true, import: 'default' }));

interface CheckRun {
  results: ShapeResult[];
  estimates: LessonEstimate[];
  /** Wall seconds from the click to the last verdict. */
  seconds: number;
}

/** larger / smaller of two estimates (1 when either is missing). */
const ratio = (a: number | null, b: number | null) => (a && b ? Math.max(a, b) / Math.min(a, b) : 1);

const fmtS = (s: number) => (s >= 10 ? s.toFixed(0) : s >= 1 ? s.toFixed(1) : s.toFixed(2));

function iterCell(t: ShapeTiming | null | undefined, error?: string): string {
  if (!t) return error ?? '–';
  const sp = spread(t.iterS);
  const n = t.iterS.length;
  return `${fmtS(sp.median)} s (${n > 1 ? `${fmtS(sp.min)}–${fmtS(sp.max)}, ${n} iterations` : '1 iteration, no range'}); setup ${fmtS(t.setupS)} s${t.warmStepS ? `, ${fmtS(t.warmStepS)} s per warm-start step` : ''}`;
}

export function LessonCheck({ autorun }: { autorun: boolean }) {
  const plan = useMemo(() => planLessons(LESSONS.lessons, loadPresets(rawPresets).presets), []);
  const [status, setStatus] = useState<'idle' | 'running' | 'done' | 'failed'>('idle');
  const [partial, setPartial] = useState<ShapeResult[]>([]);
  const [runs, setRuns] = useState<CheckRun[]>([]);
  const [error, setError] = useState<string | null>(null);

  const run = useCallback(async () => {
    const t0 = performance.now();
    setStatus('running');
    setError(null);
    setPartial([]);
    try {
      const report = await detectBackend();
      const results: ShapeResult[] = [];
      await timeShapes(
        plan.shapes,
        report,
        (r) => {
          results.push(r);
          setPartial([...results]);
        },
        t0,
      );
      const timings = new Map(results.filter((r) => r.timing).map((r) => [r.shape.key, r.timing!]));
      const estimates = estimateLessons(plan, timings);
      setRuns((rs) => [{ results, estimates, seconds: (performance.now() - t0) / 1000 }, ...rs].slice(0, 2));
      setStatus('done');
    } catch (e) {
      setError((e as Error).message);
      setStatus('failed');
    }
  }, [plan]);

  useEffect(() => {
    if (!autorun) return;
    const id = setTimeout(() => void run(), 0);
    return () => clearTimeout(id);
  }, [run, autorun]);

  const [now, prev] = runs;
  const unsteady = now?.estimates.some((e) => e.unsteady) ?? false;
  // How far each lesson's estimate moved since the run before (the largest ratio, ≥ 1).
  const moved = now && prev ? Math.max(1, ...now.estimates.map((e) => ratio(e.seconds, prev.estimates.find((p) => p.lesson === e.lesson)?.seconds ?? null))) : 1;
  const singles = now?.results.filter((r) => r.timing?.iterS.length === 1).length ?? 0;
  const shown = status === 'running' ? partial : (now?.results ?? []);
  return (
    <section className="check-card" data-testid="lesson-check" data-status={status} aria-busy={status === 'running'}>
      <h2>Lessons on this laptop</h2>
      <p>
        Times a few training iterations of every lesson&apos;s setup here (under 30 s), then says which lessons run comfortably: &quot;ready&quot; when a lesson takes at most{' '}
        {formatDuration(READY_S)}, &quot;slow&quot; when it needs longer.
      </p>
      <button className="btn primary" onClick={() => void run()} disabled={status === 'running'} data-testid="check-run">
        {status === 'running' ? `Timing… ${partial.length} of ${plan.shapes.length} setups` : runs.length ? 'Run again' : 'Check this laptop'}
      </button>
      {error && <p className="check-error">{error}</p>}
      {plan.problems.length > 0 && <p className="check-error">{plan.problems.join('; ')}</p>}
      {now && (
        <>
          <ul className="check-verdicts" data-testid="check-verdicts" aria-live="polite">
            {now.estimates.map((e) => (
              <li key={e.lesson} className={e.verdict === 'ready' ? 'check-ok' : 'check-warn'} data-testid={`verdict-${e.lesson}`} data-verdict={e.verdict}>
                <strong>{e.line}</strong> <span className="muted">({e.title}{e.low !== null && e.high !== null && formatDuration(e.low) !== formatDuration(e.high) ? `; ${formatDuration(e.low)}–${formatDuration(e.high)} from the fastest and slowest iteration` : ''})</span>
              </li>
            ))}
          </ul>
          <p className="muted" data-testid="check-took">
            The check took {now.seconds.toFixed(1)} s{prev ? ` (the run before: ${prev.seconds.toFixed(1)} s)` : ''}.
          </p>
          {moved > 1 + UNSTEADY_SPREAD && (
            <p className="check-warn" data-testid="check-moved">
              Since the run before, a lesson&apos;s estimate moved by up to {moved.toFixed(1)}×: this laptop&apos;s speed is not steady (other programs, power saving, heat). Trust the slower figures.
            </p>
          )}
          {singles > 0 && (
            <p className="muted" data-testid="check-singles">
              {singles} of {now.results.length} setups got one iteration only (it alone used the {SHAPE_ITER_BUDGET_S} s each setup gets): no spread for them. Run again to see how much they move.
            </p>
          )}
          {unsteady && (
            <p className="check-warn" data-testid="check-unsteady">
              The iteration times varied by more than {Math.round(UNSTEADY_SPREAD * 100)}% of their median: something else is using this laptop (another tab, an update, power saving). Close it and run again
              before trusting these figures.
            </p>
          )}
        </>
      )}
      {shown.length > 0 && (
        <table className="check-table" data-testid="check-shapes">
          <caption className="muted">Seconds per iteration: median (fastest–slowest) of 1–{ITERATIONS_PER_SHAPE} iterations</caption>
          <thead>
            <tr>
              <th scope="col">setup (first used in)</th>
              <th scope="col">this run</th>
              {prev && status !== 'running' && <th scope="col">the run before</th>}
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => (
              <tr key={r.shape.key} className={r.timing ? undefined : 'bad'}>
                <td>
                  {r.shape.label} <span className="muted">({r.shape.from})</span>
                </td>
                <td>{iterCell(r.timing, r.error)}</td>
                {prev && status !== 'running' && <td>{iterCell(prev.results.find((p) => p.shape.key === r.shape.key)?.timing)}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <details className="check-how">
        <summary>How the estimate is made</summary>
        <p>
          The lessons use {plan.shapes.length} distinct setups (environment, model, algorithm, batch, rollout plan; learning rates and reward terms do not change the work per iteration). Each is
          started in a training worker on WASM, as Start would, and up to {ITERATIONS_PER_SHAPE} iterations are timed (fewer once they took {SHAPE_ITER_BUDGET_S} s: {MIN_ITERATIONS}, or 1 when the first alone took that long){plan.shapes.some((s) => s.config.warmStart) ? `, plus ${WARM_STEPS_TIMED} imitation warm-start steps where the lesson has a warm start` : ''}. A lesson&apos;s time is, over its
          steps, the setup time, plus its warm-start steps times the time per warm-start step, plus its iterations times the median time per iteration. The first iterations are the slowest
          on the grid (an untrained agent walks until the step limit), so read the figures as an upper bound. With a hardware GPU, Auto may train on WebGPU where that is faster.
        </p>
      </details>
    </section>
  );
}
