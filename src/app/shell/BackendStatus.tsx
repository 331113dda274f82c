/**
 * The status-bar item that says which execution backend runs use, and why: the forced one, or
 * under 'auto' the measured choice for the current model with both figures
 * ("WASM · 2 threads · 3.1 ms/step — WebGPU 41 ms/step"), and a panel with the details.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { describeBackend, type BackendReport } from '../../runtime/backend.ts';
import { formatMs, summarize, type Candidate } from '../../core/engine/choose.ts';
import { useStore } from '../store.ts';
import type { BackendState, EngineChoiceView } from '../storeTypes.ts';

function details(r: BackendReport): [string, string][] {
  const gpu = r.webgpu;
  const adapter = gpu.adapter
    ? [gpu.vendor, gpu.architecture, gpu.description].filter(Boolean).join(' · ') || 'unnamed adapter'
    : 'none';
  return [
    ['WebGPU API', gpu.api ? 'present' : 'missing'],
    ['WebGPU adapter', adapter + (gpu.isFallbackAdapter ? ' (software fallback: correct but slow)' : '')],
    ...(gpu.reason ? ([['Why not WebGPU', gpu.reason]] as [string, string][]) : []),
    ['Cross-origin isolated', r.wasm.crossOriginIsolated ? 'yes (SharedArrayBuffer allowed)' : 'no (WASM runs single-threaded)'],
    ['WASM threads', `${r.wasm.threads} for a run whose rollouts share its thread (fewer beside rollout workers)`],
    ['WASM SIMD', r.wasm.simd ? 'yes' : 'no'],
    ['CPU threads (browser)', String(r.hardwareConcurrency)],
  ];
}

function CandidateRow({ c, chosen }: { c: Candidate; chosen: boolean }) {
  const t = c.timing;
  return (
    <tr className={chosen ? 'chosen' : undefined} data-testid={`engine-candidate-${c.id}`}>
      <td>
        {c.label}
        {chosen && <span className="muted"> (chosen)</span>}
      </td>
      <td className="num">{t ? formatMs(t.trainMs) : '–'}</td>
      <td className="num">{t && Number.isFinite(t.rolloutMs) ? formatMs(t.rolloutMs) : '–'}</td>
      <td className="num">{t ? formatMs(t.iterationMs) : '–'}</td>
      <td className="num">{t ? formatMs(t.setupMs) : '–'}</td>
      <td className="muted">{c.note ?? ''}</td>
    </tr>
  );
}

function ChoiceDetails({ choice }: { choice: EngineChoiceView }) {
  const d = choice.decision;
  return (
    <div className="engine-choice" data-testid="engine-choice">
      <h4>Measured for {choice.shapeLabel}</h4>
      <p>{d.reason}.</p>
      <table className="engine-table">
        <thead>
          <tr>
            <th>backend</th>
            <th title="median ms per train step (warm)">train ms</th>
            <th title="median ms per rollout call (warm); – where rollouts run in their own workers">rollout ms</th>
            <th title="train ms × steps per iteration + rollout ms × calls per iteration (estimated)">≈ ms / iteration</th>
            <th title="building the sessions and the first, untimed calls">setup ms</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {d.candidates.map((c) => (
            <CandidateRow key={c.id} c={c} chosen={c.id === d.chosen} />
          ))}
        </tbody>
      </table>
      <p className="muted small" data-testid="engine-choice-time">
        Timing took {(d.candidates.reduce((t, c) => t + (c.timing?.totalMs ?? 0), 0) / 1000).toFixed(1)} s in the training worker (runtime load not counted).{' '}
        {choice.cached ? `Remembered from ${new Date(choice.at).toLocaleString()} for this browser, device and model.` : 'Measured at this start; remembered for this browser, device and model.'}
      </p>
    </div>
  );
}

type ReadyBackend = Extract<BackendState, { status: 'ready' }>;

/** Closes an open popover on Escape or a press outside `root`. */
function useDismiss(open: boolean, setOpen: (o: boolean) => void, root: React.RefObject<HTMLDivElement | null>) {
  useEffect(() => {
    if (!open) return;
    const close = (e: MouseEvent | KeyboardEvent) => {
      if (e instanceof KeyboardEvent ? e.key === 'Escape' : !root.current?.contains(e.target as Node)) setOpen(false);
    };
    window.addEventListener('mousedown', close);
    window.addEventListener('keydown', close);
    return () => {
      window.removeEventListener('mousedown', close);
      window.removeEventListener('keydown', close);
    };
  }, [open, setOpen, root]);
}

export function BackendStatus() {
  const backend = useStore((s) => s.backend);
  const choice = useStore((s) => s.engineChoice);
  const measuring = useStore((s) => s.measuringBackends);
  const requested = useStore((s) => s.draft.backend);
  const detect = useStore((s) => s.detectBackend);
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const root = useRef<HTMLDivElement>(null);

  useEffect(() => {
    void detect(window.location.search);
  }, [detect]);
  useDismiss(open, setOpen, root);

  if (backend.status !== 'ready') {
    return (
      <div className="backend" data-testid="backend-status">
        <span className="dot dot-idle" aria-hidden />
        {backend.status === 'detecting' ? 'Detecting backend…' : `Backend detection failed: ${backend.message}`}
      </div>
    );
  }
  const r = backend.report;
  const auto = requested === 'auto';
  // What the next (or current) run uses: the forced backend, the measured choice, or 'auto' until timed.
  const effective = !auto ? requested : (choice?.decision.chosen ?? 'auto');
  let line: string;
  if (!auto) line = describeBackend({ ...r, chosen: requested });
  else if (measuring) line = 'Timing WASM and WebGPU on this model…';
  else if (choice) line = summarize(choice.decision);
  else line = describeBackend(r);
  return (
    <div className="backend" ref={root}>
      <button
        type="button"
        className="backend-button"
        data-testid="backend-status"
        data-backend={effective}
        data-measuring={measuring ? 'true' : 'false'}
        aria-expanded={open}
        aria-controls={panelId}
        title={line}
        onClick={() => setOpen((o) => !o)}
      >
        <span className={`dot ${effective === 'webgpu' ? 'dot-gpu' : effective === 'wasm' ? 'dot-wasm' : 'dot-idle'}`} aria-hidden />
        <span className="backend-line">{line}</span>
        {backend.forced && <span className="muted"> · forced by ?backend={backend.forced}</span>}
        {backend.threads !== null && <span className="muted"> · ?threads={backend.threads}</span>}
      </button>
      {open && <BackendPanel id={panelId} backend={backend} />}
    </div>
  );
}

/** The details popover: why this backend, the measured choice under auto (with Measure again), and what the browser offers. */
function BackendPanel({ id, backend }: { id: string; backend: ReadyBackend }) {
  const choice = useStore((s) => s.engineChoice);
  const measuring = useStore((s) => s.measuringBackends);
  const requested = useStore((s) => s.draft.backend);
  const runStatus = useStore((s) => s.status);
  const measureAgain = useStore((s) => s.measureAgain);
  const r = backend.report;
  const auto = requested === 'auto';
  const busy = measuring || ['starting', 'running', 'pausing', 'stepping'].includes(runStatus);
  const rows = details(r);
  return (
    <div className="backend-panel" id={id} role="dialog" aria-label="Execution backend details">
      <h3>Execution backend</h3>
      <p>
        {auto
          ? 'Auto: when a model first trains on this device, a few train steps and rollout calls are timed on each backend (under 1.5 s, in the training worker) and the faster is kept. A software WebGPU adapter is never picked.'
          : backend.forced
            ? `Forced by ?backend=${backend.forced} in the address.`
            : !r.webgpu.adapter && requested === 'wasm'
              ? `Auto's choice: WASM, the only backend here (${r.webgpu.reason ?? 'no WebGPU adapter'}).`
              : 'Chosen in the Backend field of the Train settings.'}
      </p>
      {auto && choice && <ChoiceDetails choice={choice} />}
      {auto && (
        <button type="button" className="btn measure-again" data-testid="measure-again" disabled={busy} title={busy ? 'Pause or finish the run first: timing beside it would skew both.' : undefined} onClick={() => void measureAgain()}>
          {measuring ? 'Timing…' : 'Measure again'}
        </button>
      )}
      {auto && (
        <p className="muted small">Measure again takes up to 10 s: long enough for a GPU whose first shader compiles outlast the 1.5 s a start allows.</p>
      )}
      <dl>
        {rows.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      <p className="muted small">
        Add <code>?backend=wasm</code> or <code>?backend=webgpu</code> to the address to force one (<code>?backend=auto</code> or nothing: measure), and{' '}
        <code>?threads=N</code> to force the WASM thread count.
      </p>
    </div>
  );
}
