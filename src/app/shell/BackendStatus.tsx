/** The status-bar item that says which execution backend policies will run on, and why. */
import { useEffect, useId, useRef, useState } from 'react';
import { describeBackend, type BackendReport } from '../../runtime/backend.ts';
import { useStore } from '../state/store.ts';

function details(r: BackendReport): [string, string][] {
  const gpu = r.webgpu;
  const adapter = gpu.adapter
    ? [gpu.vendor, gpu.architecture, gpu.description].filter(Boolean).join(' · ') || 'unnamed adapter'
    : 'none';
  return [
    ['Backend', r.chosen === 'webgpu' ? 'WebGPU' : 'WASM'],
    ['WebGPU API', gpu.api ? 'present' : 'missing'],
    ['WebGPU adapter', adapter + (gpu.isFallbackAdapter ? ' (software fallback: correct but slow)' : '')],
    ...(gpu.reason ? ([['Why not WebGPU', gpu.reason]] as [string, string][]) : []),
    ['Cross-origin isolated', r.wasm.crossOriginIsolated ? 'yes (SharedArrayBuffer allowed)' : 'no (WASM runs single-threaded)'],
    ['WASM threads', String(r.wasm.threads)],
    ['WASM SIMD', r.wasm.simd ? 'yes' : 'no'],
    ['CPU threads (browser)', String(r.hardwareConcurrency)],
  ];
}

export function BackendStatus() {
  const backend = useStore((s) => s.backend);
  const detect = useStore((s) => s.detectBackend);
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const root = useRef<HTMLDivElement>(null);

  useEffect(() => {
    void detect(window.location.search);
  }, [detect]);

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
  }, [open]);

  if (backend.status !== 'ready') {
    return (
      <div className="backend" data-testid="backend-status">
        <span className="dot dot-idle" aria-hidden />
        {backend.status === 'detecting' ? 'Detecting backend…' : `Backend detection failed: ${backend.message}`}
      </div>
    );
  }
  const r = backend.report;
  const rows = details(r);
  return (
    <div className="backend" ref={root}>
      <button
        type="button"
        className="backend-button"
        data-testid="backend-status"
        data-backend={r.chosen}
        aria-expanded={open}
        aria-controls={panelId}
        title={rows.map(([k, v]) => `${k}: ${v}`).join('\n')}
        onClick={() => setOpen((o) => !o)}
      >
        <span className={`dot ${r.chosen === 'webgpu' ? 'dot-gpu' : 'dot-wasm'}`} aria-hidden />
        {describeBackend(r)}
        {backend.forced && <span className="muted"> · forced by ?backend={backend.forced}</span>}
      </button>
      {open && (
        <div className="backend-panel" id={panelId} role="dialog" aria-label="Execution backend details">
          <h3>Execution backend</h3>
          <dl>
            {rows.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
          <p className="muted small">
            Add <code>?backend=wasm</code> or <code>?backend=webgpu</code> to the address to choose.
          </p>
        </div>
      )}
    </div>
  );
}
