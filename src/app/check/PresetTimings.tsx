/**
 * The device check's view of the playground's own backend choice: the same measurement a run's
 * first start makes (core/engine, in a worker), on one preset per model family, with the
 * software adapter timed too (a start skips it) and a longer budget, so a host sees both figures.
 */
import { formatMs, summarize, type EngineDecision } from '../../core/engine/choose.ts';
import { learnerThreads } from '../../core/engine/threads.ts';
import { parseRunConfig, type RunConfig } from '../../core/presets/schema.ts';
import type { BackendReport } from '../../runtime/backend.ts';
import { withProbeWorker } from '../train/client.ts';
import grid from '../../../presets/grid-empty-8x8-grpo.json';
import calc from '../../../presets/calc-grpo.json';

/** Per preset, ms (`?budget=` overrides): a software adapter's first WebGPU train step on the grid preset took 10–90 s here. */
export const CHECK_BUDGET_MS = Number(new URLSearchParams(globalThis.location?.search ?? '').get('budget') ?? 30_000);

export interface PresetTiming {
  preset: string;
  decision: EngineDecision | null;
  error?: string;
}

const PRESETS: unknown[] = [grid, calc];

function config(raw: unknown): RunConfig {
  const r = parseRunConfig(raw);
  if (!r.ok) throw new Error(r.messages.join('; '));
  return r.config;
}

/** Times each preset's model on every backend this browser has, one preset at a time. */
export async function timePresets(report: BackendReport, onEach: (t: PresetTiming) => void): Promise<void> {
  for (const raw of PRESETS) {
    const id = (raw as { id?: string }).id ?? '?';
    try {
      const cfg = config(raw);
      const threads = learnerThreads({ cores: report.hardwareConcurrency, isolated: report.wasm.crossOriginIsolated, rolloutWorkers: cfg.rollout.workers });
      const decision = await withProbeWorker((w) =>
        w.measureBackends(cfg, {
          backends: report.webgpu.adapter ? ['wasm', 'webgpu'] : ['wasm'],
          threads,
          budgetMs: CHECK_BUDGET_MS,
          softwareAdapter: report.webgpu.isFallbackAdapter,
          timeSoftware: true,
        }),
      );
      onEach({ preset: id, decision });
    } catch (e) {
      onEach({ preset: id, decision: null, error: (e as Error).message });
    }
  }
}

export function PresetTimingsTable({ rows }: { rows: PresetTiming[] }) {
  return (
    <table className="check-table" data-testid="check-choice">
      <thead>
        <tr>
          <th>preset</th>
          <th>the playground picks</th>
          <th>train ms/step</th>
          <th>rollout ms/call</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) =>
          r.decision ? (
            r.decision.candidates.map((c, i) => (
              <tr key={r.preset + c.id} className={c.id === r.decision!.chosen ? 'good' : undefined} data-testid={`check-choice-${r.preset}-${c.id}`}>
                <td>{i === 0 ? r.preset : ''}</td>
                <td>
                  {c.label}
                  {c.id === r.decision!.chosen ? ' (chosen)' : c.note ? ` (${c.note})` : ''}
                </td>
                <td>{c.timing ? formatMs(c.timing.trainMs) : '–'}</td>
                <td>{c.timing && Number.isFinite(c.timing.rolloutMs) ? formatMs(c.timing.rolloutMs) : '–'}</td>
              </tr>
            ))
          ) : (
            <tr key={r.preset} className="bad">
              <td>{r.preset}</td>
              <td colSpan={3}>{r.error}</td>
            </tr>
          ),
        )}
      </tbody>
      <tfoot>
        {rows
          .filter((r) => r.decision)
          .map((r) => (
            <tr key={r.preset}>
              <td colSpan={4} className="muted" data-testid={`check-choice-line-${r.preset}`}>
                {r.preset}: {summarize(r.decision!)}
              </td>
            </tr>
          ))}
      </tfoot>
    </table>
  );
}
