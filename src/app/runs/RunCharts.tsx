/**
 * Charts of saved runs, drawn with recharts: they update only when a person changes
 * a setting, and its tooltips and legends fit. The live dashboard keeps its own SVG renderer
 * (MetricChart): recharts was measured at ~12 ms per chart update at 200 points, and twenty
 * charts updating together at every training iteration made a long task each time.
 */
import { memo, useMemo } from 'react';
import { Area, CartesianGrid, ComposedChart, Legend, Line, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { MetricRow } from '../../core/runs/format.ts';
import { seedGroupKey } from '../../core/runs/format.ts';
import type { RunConfig } from '../../core/presets/schema.ts';
import { metricDecl } from '../../core/metrics/lookup.ts';
import { ema, meanBand, seriesOf, thinSeries, tickFormat, X_AXES, type XAxis as XAxisId } from './compare.ts';

export const PALETTE = ['#4f46e5', '#c2410c', '#16803c', '#7c3aed', '#0f766e', '#c92a2a', '#2563eb', '#a15c00', '#64748b', '#be185d'];

/** A run as the charts need it. */
export interface ChartRun {
  id: string;
  name: string;
  config: RunConfig;
  rows: readonly MetricRow[];
  /** Vertical markers on the iteration axis (iterations done, 1-based): where each reward-code version took over. */
  markers?: readonly { x: number; label: string }[];
}

interface Drawn {
  key: string;
  label: string;
  color: string;
  /** Mean ± std over this many seeds; 1 = a single run's line. */
  seeds: number;
}

export interface ChartModel {
  data: Record<string, number | [number, number] | undefined>[];
  lines: Drawn[];
}

const fmtNum = (v: number) => (Math.abs(v) >= 1000 ? v.toLocaleString('en-US', { maximumFractionDigits: 0 }) : Number(v.toPrecision(3)).toString());

/** Whether a metric is a share (0..1, its registry unit): its chart shows the whole range, as the live dashboard does. */
const isShareMetric = (key: string): boolean => metricDecl(key)?.unit === 'share';

/** Finite y values of the model (lines and bands), for the tick format. */
function yRange(model: ChartModel): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const row of model.data) {
    for (const [k, v] of Object.entries(row)) {
      if (k === 'x') continue;
      for (const y of Array.isArray(v) ? v : [v]) {
        if (typeof y === 'number' && Number.isFinite(y)) {
          lo = Math.min(lo, y);
          hi = Math.max(hi, y);
        }
      }
    }
  }
  return lo <= hi ? [lo, hi] : [0, 1];
}

/**
 * One table for recharts: a row per x (union over the series), a column per line (`s<i>`), and
 * for seed groups a `[lo, hi]` column (`b<i>`) for the band. Missing values are left out (the
 * lines connect across them).
 */
export function chartModel(runs: readonly ChartRun[], metric: string, axis: XAxisId, smoothing: number, groupSeeds: boolean): ChartModel {
  const groups: ChartRun[][] = [];
  if (groupSeeds) {
    const by = new Map<string, ChartRun[]>();
    for (const r of runs) {
      const k = seedGroupKey(r.config);
      if (!by.has(k)) groups.push(by.set(k, []).get(k)!);
      by.get(k)!.push(r);
    }
  } else for (const r of runs) groups.push([r]);
  const byX = new Map<number, Record<string, number | [number, number] | undefined>>();
  const at = (x: number) => {
    let row = byX.get(x);
    if (!row) byX.set(x, (row = { x }));
    return row;
  };
  const lines: Drawn[] = [];
  groups.forEach((g, i) => {
    const key = `s${i}`;
    const series = g.map((r) => {
      const s = seriesOf(r.rows, metric, axis);
      return { x: s.x, y: ema(s.y, smoothing) };
    });
    const color = PALETTE[i % PALETTE.length];
    if (g.length === 1) {
      const s = thinSeries(series[0]);
      s.x.forEach((x, j) => {
        if (Number.isFinite(s.y[j])) at(x)[key] = s.y[j];
      });
      lines.push({ key, label: g[0].name, color, seeds: 1 });
      return;
    }
    const band = meanBand(series, axis);
    band.x.forEach((x, j) => {
      if (!Number.isFinite(band.mean[j])) return;
      const row = at(x);
      row[key] = band.mean[j];
      row[`b${i}`] = [band.lo[j], band.hi[j]];
    });
    const seeds = g.map((r) => r.config.seed).join(', ');
    lines.push({ key, label: `${g[0].config.id} · mean ± std of ${g.length} seeds (${seeds})`, color, seeds: g.length });
  });
  const data = [...byX.values()].sort((a, b) => (a.x as number) - (b.x as number));
  return { data, lines };
}

interface RunChartProps {
  runs: readonly ChartRun[];
  metric: string;
  axis: XAxisId;
  smoothing?: number;
  groupSeeds?: boolean;
  height?: number;
  title?: string;
  /** Show the legend (the compare chart; single-run charts need none). */
  legend?: boolean;
  testId?: string;
}

/** A metric of one or more saved runs over the chosen x axis, with seed groups as mean ± band. */
export const RunChart = memo(function RunChart({ runs, metric, axis, smoothing = 0, groupSeeds = false, height = 220, title, legend = false, testId }: RunChartProps) {
  const model = useMemo(() => chartModel(runs, metric, axis, smoothing, groupSeeds), [runs, metric, axis, smoothing, groupSeeds]);
  const unit = X_AXES.find((a) => a.id === axis)!;
  const empty = model.lines.length === 0 || model.data.length === 0;
  const share = isShareMetric(metric);
  const [lo, hi] = share ? [0, 1] : yRange(model);
  const yTick = tickFormat(lo, hi);
  // Long runs read better from 0 (ticks at round numbers); a short one would waste its left part.
  const lastX = model.data.length ? (model.data[model.data.length - 1].x as number) : 0;
  const xFrom0 = lastX >= 10;
  // Reward-code versions, on the iteration axis only (env steps and seconds differ per run), and
  // not over seed bands (the seeds' versions need not agree); a run's markers take its colour.
  const markers = axis !== 'iteration' || groupSeeds ? [] : runs.flatMap((r, i) => (r.markers ?? []).map((m) => ({ ...m, color: runs.length > 1 ? PALETTE[i % PALETTE.length] : '#7c8597' })));
  return (
    <figure className="run-chart panel" data-testid={testId} data-markers={markers.map((m) => m.label).join(',')} data-lines={model.lines.length} data-bands={model.lines.filter((l) => l.seeds > 1).length} data-points={model.data.length}>
      {title && <figcaption className="run-chart-title">{title}</figcaption>}
      {empty ? (
        <div className="run-chart-empty muted">No values of {metric} in {runs.length === 1 ? 'this run' : 'these runs'}.</div>
      ) : (
        <ResponsiveContainer width="100%" height={height}>
          <ComposedChart data={model.data} margin={{ top: 8, right: 16, bottom: 18, left: 4 }}>
            <CartesianGrid stroke="#e8ebf2" />
            <XAxis dataKey="x" type="number" domain={xFrom0 ? [0, 'dataMax'] : ['dataMin', 'dataMax']} allowDecimals={axis !== 'iteration'} tickFormatter={fmtNum} fontSize={11} label={{ value: unit.unit, position: 'insideBottom', offset: -10, fontSize: 11, fill: '#5b6478' }} />
            <YAxis fontSize={11} width={56} tickFormatter={yTick} domain={share ? [0, 1] : ['auto', 'auto']} ticks={share ? [0, 0.25, 0.5, 0.75, 1] : undefined} />
            <Tooltip
              isAnimationActive={false}
              labelFormatter={(x) => `${unit.label} ${fmtNum(Number(x))}`}
              formatter={(v, name) => (Array.isArray(v) ? [`${fmtNum(Number(v[0]))} … ${fmtNum(Number(v[1]))}`, name] : [fmtNum(Number(v)), name])}
            />
            {legend && <Legend verticalAlign="top" height={28} wrapperStyle={{ fontSize: 12 }} />}
            {model.lines
              .filter((l) => l.seeds > 1)
              .map((l) => (
                <Area
                  key={`band-${l.key}`}
                  className="compare-band"
                  dataKey={`b${l.key.slice(1)}`}
                  name={`± std (${l.seeds} seeds)`}
                  stroke="none"
                  fill={l.color}
                  fillOpacity={0.18}
                  isAnimationActive={false}
                  connectNulls
                  legendType="none"
                  activeDot={false}
                />
              ))}
            {markers.map((m, i) => (
              <ReferenceLine key={`m${i}`} x={m.x} stroke={m.color} strokeDasharray="4 3" className="run-chart-marker" label={{ value: m.label, position: 'insideTopLeft', fontSize: 10, fill: m.color }} />
            ))}
            {model.lines.map((l) => (
              <Line key={l.key} dataKey={l.key} name={l.label} stroke={l.color} strokeWidth={l.seeds > 1 ? 2.2 : 1.6} dot={false} isAnimationActive={false} connectNulls type="linear" />
            ))}
          </ComposedChart>
        </ResponsiveContainer>
      )}
    </figure>
  );
});
