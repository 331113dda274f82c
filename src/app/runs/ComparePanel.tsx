/**
 * Selected runs side by side: their metric curves (seed groups pooled), settings that differ,
 * and the final-score statistics.
 */
import { useMemo } from 'react';
import { useStore } from '../store.ts';
import { configDiff } from '../../core/runs/format.ts';
import type { RunMeta } from '../../runtime/storage/runStore.ts';
import { X_AXES } from './compare.ts';
import { RunChart, type ChartRun } from './RunCharts.tsx';
import { CompareStatsPanel } from './CompareStats.tsx';
import { runMarkers } from './runParts.tsx';

/** The ticked runs (in tick order), those of them with rows loaded as chart runs, and every finite metric key of those rows. */
function useCompared() {
  const runs = useStore((s) => s.runs);
  const selected = useStore((s) => s.selected);
  const rows = useStore((s) => s.compareRows);
  const chosen = useMemo(() => selected.map((id) => runs?.find((r) => r.id === id)).filter((r): r is RunMeta => !!r), [runs, selected]);
  const chartRuns = useMemo<ChartRun[]>(() => chosen.filter((r) => rows[r.id]).map((r) => ({ id: r.id, name: r.name, config: r.config, rows: rows[r.id], markers: runMarkers(r.config, r.liveEdits) })), [chosen, rows]);
  const keys = useMemo(() => {
    const k = new Set<string>();
    for (const r of chartRuns) for (const row of r.rows) for (const [name, v] of Object.entries(row)) if (Number.isFinite(v)) k.add(name);
    k.delete('iteration');
    k.delete('wall_s');
    return [...k].sort();
  }, [chartRuns]);
  return { chosen, chartRuns, keys };
}

export function ComparePanel() {
  const settings = useStore((s) => s.compare);
  const { chosen, chartRuns, keys } = useCompared();
  if (chosen.length === 0) {
    return (
      <p className="muted compare-hint" data-testid="compare-hint">
        Tick runs to compare them: any metric, smoothed, over iterations, env steps or wall time; runs of one config on different seeds are drawn as mean ± band.
      </p>
    );
  }
  return (
    <section className="compare panel" data-testid="compare-panel">
      <CompareControls count={chosen.length} keys={keys} />
      <RunChart runs={chartRuns} metric={settings.metric} axis={settings.xAxis} smoothing={settings.smoothing} groupSeeds={settings.groupSeeds} height={340} legend testId="compare-chart" />
      {chartRuns.length > 0 && <CompareStatsPanel runs={chartRuns} metric={settings.metric} />}
      <ConfigDiff chosen={chosen} />
    </section>
  );
}

/** The metric (any of `keys`), smoothing, x axis and seed pooling of the comparison. */
function CompareControls({ count, keys }: { count: number; keys: string[] }) {
  const settings = useStore((s) => s.compare);
  const setCompare = useStore((s) => s.setCompare);
  return (
    <div className="compare-controls">
      <h3>Compare {count} run{count > 1 ? 's' : ''}</h3>
      <label>
        Metric{' '}
        <select data-testid="compare-metric" value={settings.metric} onChange={(e) => setCompare({ metric: e.target.value })}>
          {!keys.includes(settings.metric) && <option value={settings.metric}>{settings.metric}</option>}
          {keys.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </label>
      <label title="Exponential moving average (debiased, as TensorBoard): 0 = raw values">
        Smoothing{' '}
        <input type="range" min={0} max={0.99} step={0.01} value={settings.smoothing} data-testid="compare-smoothing" onChange={(e) => setCompare({ smoothing: Number(e.target.value) })} />
        <span className="mono small">{settings.smoothing.toFixed(2)}</span>
      </label>
      <span className="segmented" role="radiogroup" aria-label="x axis">
        {X_AXES.map((a) => (
          <label key={a.id}>
            <input type="radio" name="compare-x" data-testid={`compare-x-${a.id}`} checked={settings.xAxis === a.id} onChange={() => setCompare({ xAxis: a.id })} />
            {a.label}
          </label>
        ))}
      </span>
      <label title="Runs whose configs differ only in the seed (and iteration count) are one line: the mean, with a band of ± one standard deviation across seeds">
        <input type="checkbox" data-testid="compare-group-seeds" checked={settings.groupSeeds} onChange={(e) => setCompare({ groupSeeds: e.target.checked })} /> seeds as mean ± band
      </label>
    </div>
  );
}

/** The config fields whose values differ between the chosen runs, one column per run. */
function ConfigDiff({ chosen }: { chosen: RunMeta[] }) {
  const diff = useMemo(() => configDiff(chosen.map((r) => r.config)), [chosen]);
  return (
    <div className="config-diff" data-testid="config-diff">
      <h4>Config fields that differ</h4>
      {chosen.length < 2 ? (
        <p className="muted small">Tick a second run to see how the configs differ.</p>
      ) : diff.length === 0 ? (
        <p className="muted small">The configs are identical.</p>
      ) : (
        <table className="diff-table">
          <thead>
            <tr>
              <th>field</th>
              {chosen.map((r) => (
                <th key={r.id}>{r.name}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {diff.map((d) => (
              <tr key={d.path} data-testid="diff-row" data-path={d.path}>
                <td className="mono">{d.path}</td>
                {d.values.map((v, i) => (
                  <td key={chosen[i].id} className="mono">
                    {v === undefined ? <span className="muted">—</span> : JSON.stringify(v)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
