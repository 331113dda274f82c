/**
 * One small live chart: a few metric lines over iterations, optionally a band (e.g. reward
 * mean ± std) and a reference line (e.g. the maximum entropy ln|A|). Cheap by construction: no
 * animation, no dots, at most MAX_POINTS points, and memoised so it redraws only when its data
 * array changes.
 */
import { memo } from 'react';
import { Area, CartesianGrid, ComposedChart, Line, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { MetricPoint } from './slice.ts';

/** Points drawn per chart; longer histories are thinned evenly (the last point always kept). */
export const MAX_POINTS = 200;

export function thin(history: readonly MetricPoint[], max = MAX_POINTS): MetricPoint[] {
  if (history.length <= max) return history as MetricPoint[];
  const stride = history.length / max;
  const out: MetricPoint[] = [];
  for (let i = 0; i < max - 1; i++) out.push(history[Math.floor(i * stride)]);
  out.push(history[history.length - 1]);
  return out;
}

export interface LineSpec {
  key: string;
  label: string;
  color: string;
  dashed?: boolean;
}

export interface ChartSpec {
  id: string;
  title: string;
  /** What it shows and how to read it (tooltip). */
  help: string;
  lines: LineSpec[];
  /** [low key, high key] of a shaded band. */
  band?: [string, string];
  domain?: [number | 'auto', number | 'auto'];
  /** Horizontal reference line, e.g. a maximum. */
  ref?: { y: number; label: string };
  /** Shown instead of the plot when none of the lines has data (why this run does not produce it). */
  absentNote?: string;
  format?: (v: number) => string;
}

export function fmt(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(1);
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  return v.toFixed(3);
}

const axisTick = { fontSize: 10, fill: '#5b6478' };

export const MetricChart = memo(function MetricChart({ spec, data }: { spec: ChartSpec; data: MetricPoint[] }) {
  const last = data[data.length - 1];
  const has = data.some((p) => spec.lines.some((l) => p[l.key] !== undefined));
  const f = spec.format ?? fmt;
  return (
    <figure className="chart" data-testid={`chart-${spec.id}`} data-points={data.length} data-latest={last ? String(last[spec.lines[0].key] ?? '') : ''}>
      <figcaption className="chart-head">
        <span className="chart-title">
          {spec.title}
          <span className="help" tabIndex={0} role="note" aria-label={spec.help} data-help={spec.help}>
            ?
          </span>
        </span>
        <span className="chart-values">
          {spec.lines.map((l) => (
            <span key={l.key} className="chart-value" style={{ color: l.color }} title={l.label}>
              {l.label} <b>{last ? f(last[l.key]) : '–'}</b>
            </span>
          ))}
        </span>
      </figcaption>
      <div className="chart-body">
        {data.length === 0 ? (
          <div className="chart-empty">Press Start or Step to train.</div>
        ) : !has ? (
          <div className="chart-empty">{spec.absentNote ?? 'Not produced by this run.'}</div>
        ) : (
          <ResponsiveContainer width="100%" height="100%" minWidth={0} initialDimension={{ width: 300, height: 120 }}>
            <ComposedChart data={data} margin={{ top: 6, right: 8, bottom: 0, left: 0 }}>
              <CartesianGrid stroke="#eef0f5" vertical={false} />
              <XAxis dataKey="it" type="number" domain={['dataMin', 'dataMax']} allowDecimals={false} tick={axisTick} tickLine={false} axisLine={{ stroke: '#dfe3ec' }} height={18} />
              <YAxis domain={spec.domain ?? ['auto', 'auto']} tick={axisTick} tickLine={false} axisLine={false} width={42} tickFormatter={(v: number) => f(v)} />
              <Tooltip
                isAnimationActive={false}
                formatter={(v) => (Array.isArray(v) ? v.map((x) => f(Number(x))).join(' … ') : f(Number(v)))}
                labelFormatter={(l) => `iteration ${String(l)}`}
                contentStyle={{ fontSize: 12, borderRadius: 6, padding: '4px 8px' }}
              />
              {spec.ref && <ReferenceLine y={spec.ref.y} stroke="#9aa3b5" strokeDasharray="4 3" label={{ value: spec.ref.label, position: 'insideTopRight', fontSize: 10, fill: '#5b6478' }} />}
              {spec.band && (
                <Area
                  dataKey={(p: MetricPoint) => [p[spec.band![0]], p[spec.band![1]]]}
                  name="± std"
                  stroke="none"
                  fill={spec.lines[0].color}
                  fillOpacity={0.14}
                  isAnimationActive={false}
                  activeDot={false}
                />
              )}
              {spec.lines.map((l) => (
                <Line
                  key={l.key}
                  dataKey={l.key}
                  name={l.label}
                  stroke={l.color}
                  strokeWidth={1.8}
                  strokeDasharray={l.dashed ? '4 3' : undefined}
                  dot={false}
                  isAnimationActive={false}
                  connectNulls
                />
              ))}
            </ComposedChart>
          </ResponsiveContainer>
        )}
      </div>
    </figure>
  );
});
