/**
 * One small live chart: a few metric lines over iterations, optionally a band (e.g. reward
 * mean ± std) and a reference line (e.g. the maximum entropy ln|A|), with a hover read-out.
 *
 * Plain SVG, not recharts: measured in Chromium on the 2-core CI machine, one recharts 3 chart
 * update took 50–300 ms of main thread (its per-chart redux store, selectors and immer), so a
 * dashboard of 16 charts could not meet the "no long task over 50 ms" bar while training. This
 * draws a chart in well under a millisecond: a few <path>s whose strings plot.ts computes.
 * Memoised, at most MAX_POINTS points, and redrawn through a shared per-frame queue.
 */
import { memo, useEffect, useMemo, useRef, useState } from 'react';
import { useElementSize } from './useElementSize.ts';
import { bandPath, linePath, linear, niceTicks, yRange } from './plot.ts';
import type { MetricPoint } from './plot.ts';
import type { MetricKey } from '../../core/metrics/registry.ts';

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

/*
 * Staggered redraws. A dashboard has ~16 charts: rather than redraw all in one task, each
 * chart hands its new data to a shared queue, and a few charts take theirs per animation frame; a chart that gets newer data while queued keeps only the newest. Charts off
 * screen wait until they scroll into view.
 */
const queue = new Map<object, () => void>();
let frameId = 0;

/** Charts handed new data per animation frame. */
const PER_FRAME = 4;

function pump(): void {
  frameId = 0;
  for (let i = 0; i < PER_FRAME; i++) {
    const next = queue.entries().next();
    if (next.done) return;
    const [key, job] = next.value;
    queue.delete(key);
    job();
  }
  if (queue.size) frameId = requestAnimationFrame(pump);
}

function enqueue(key: object, job: () => void): void {
  queue.set(key, job);
  if (!frameId) frameId = requestAnimationFrame(pump);
}

/** `data` as the chart should draw it: updated through the shared queue, only while visible (the reward lab's stacked chart shares it). */
export function useStaggered<T>(data: T, target: React.RefObject<HTMLElement | null>): T {
  const [shown, setShown] = useState(data);
  const [visible, setVisible] = useState(true);
  const [key] = useState(() => ({}));
  useEffect(() => {
    const el = target.current;
    if (!el || typeof IntersectionObserver === 'undefined') return;
    const io = new IntersectionObserver((entries) => setVisible(entries.some((e) => e.isIntersecting)), { rootMargin: '120px' });
    io.observe(el);
    return () => io.disconnect();
  }, [target]);
  useEffect(() => {
    if (!visible || shown === data) {
      queue.delete(key);
      return;
    }
    enqueue(key, () => setShown(data));
  }, [data, visible, shown, key]);
  useEffect(() => () => void queue.delete(key), [key]);
  return shown;
}

export interface LineSpec {
  /** A declared metric key (core/metrics/registry.ts): a chart cannot draw a key no run logs. */
  key: MetricKey;
  label: string;
  color: string;
  /** A secondary line: thinner and lighter (not dashed: dashes make recharts measure path lengths). */
  dashed?: boolean;
}

export interface ChartSpec {
  id: string;
  title: string;
  /** What it shows and how to read it (tooltip). */
  help: string;
  lines: LineSpec[];
  /** [low key, high key] of a shaded band. */
  band?: [MetricKey, MetricKey];
  domain?: [number | 'auto', number | 'auto'];
  /** Horizontal reference line, e.g. a maximum. */
  ref?: { y: number; label: string };
  /** Shown instead of the plot when none of the lines has data (why this run does not produce it). */
  absentNote?: string;
  format?: (v: number) => string;
  /**
   * Its metrics are logged only every few iterations (held-out evaluations): the line joins its
   * points across the iterations without one, and each point gets a dot.
   */
  sparse?: boolean;
}

/** Axis labels: as few digits as the tick needs (0, 0.25, 150, 1e-4). */
export function tickFmt(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a < 1e-3 || a >= 1e5) return v.toExponential(0);
  return String(Number(v.toPrecision(3)));
}

/** Below this a value is float rounding around 0 and shows as 0 (a zero-spread group's advantage read +1.1e-10). */
export const FLOAT_NOISE = 1e-9;

export function fmt(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a < FLOAT_NOISE) return '0';
  if (a < 1e-3 || a >= 1e5) return v.toExponential(1);
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  return v.toFixed(3);
}


/** Plot margins, px: room for the y tick labels on the left and the x ticks below. */
export const PAD = { left: 40, right: 8, top: 6, bottom: 16 };

/** A vertical line at iteration `x` with a label, e.g. where RL began after a warm start. */
export interface ChartMarker {
  x: number;
  label: string;
}

/** Approximate width of a tick-font character, px (11 px sans): enough to keep marker labels apart. */
const CHAR_PX = 6.2;

/**
 * Marker labels laid out so that near markers do not print over each other: each label takes the
 * first of a few rows where it clears the labels already placed; labels near the right edge end
 * at their line instead of starting there. Pure, exported for tests.
 */
export function layoutMarkers(xs: readonly number[], labels: readonly string[], right: number, rows = 3): { row: number; anchor: 'start' | 'end'; tx: number }[] {
  const ends: number[] = new Array(rows).fill(-Infinity);
  return xs.map((x, i) => {
    const w = labels[i].length * CHAR_PX;
    const anchor = x + 3 + w > right ? 'end' : 'start';
    const from = anchor === 'start' ? x + 3 : x - 3 - w;
    let row = ends.findIndex((e) => e + 4 <= from);
    if (row < 0) row = ends.indexOf(Math.min(...ends));
    ends[row] = from + w;
    return { row, anchor, tx: anchor === 'start' ? x + 3 : x - 3 };
  });
}

/** A chart's grid lines with y tick labels (`label` formats them) and its integer x ticks. */
export function PlotAxes({ xTicks, yTicks, sx, sy, width, height, label }: { xTicks: number[]; yTicks: number[]; sx: (x: number) => number; sy: (y: number) => number; width: number; height: number; label: (v: number) => string }) {
  return (
    <>
      {yTicks.map((t) => (
        <g key={t}>
          <line x1={PAD.left} x2={width - PAD.right} y1={sy(t)} y2={sy(t)} className="plot-grid" />
          <text x={PAD.left - 5} y={sy(t)} className="plot-tick" textAnchor="end" dominantBaseline="middle">
            {label(t)}
          </text>
        </g>
      ))}
      {xTicks.map((t) => (
        <text key={t} x={sx(t)} y={height - 3} className="plot-tick" textAnchor="middle">
          {t}
        </text>
      ))}
    </>
  );
}

/** Placed markers (layoutMarkers' rows and anchors at pixel x `px`): a dashed line and its label each. */
export function PlotMarkers({ marks, height }: { marks: readonly (ChartMarker & { px: number; row: number; anchor: 'start' | 'end'; tx: number })[]; height: number }) {
  return (
    <>
      {marks.map((m) => (
        <g key={`${m.label}@${m.x}`} data-testid="chart-marker" data-x={m.x}>
          <line x1={m.px} x2={m.px} y1={PAD.top} y2={height - PAD.bottom} className="plot-ref" />
          <text x={m.tx} y={PAD.top + 8 + m.row * 11} className="plot-tick plot-marker-label" textAnchor={m.anchor}>
            {m.label}
          </text>
        </g>
      ))}
    </>
  );
}

/** A chart's scales, ticks, line and band paths, and placed markers, for one size and one history. */
function plotGeometry(data: MetricPoint[], spec: ChartSpec, width: number, height: number, markers: readonly ChartMarker[] | undefined) {
  const xs = data.map((p) => p.it);
  const values: number[] = [];
  for (const p of data) {
    for (const l of spec.lines) values.push(p[l.key]);
    if (spec.band) values.push(p[spec.band[0]], p[spec.band[1]]);
  }
  const [y0, y1] = yRange(values, spec.domain, spec.ref?.y);
  const x0 = xs[0] ?? 0;
  const x1 = Math.max(x0 + 1, xs[xs.length - 1] ?? 1);
  const sx = linear(x0, x1, PAD.left, width - PAD.right);
  const sy = linear(y0, y1, height - PAD.bottom, PAD.top);
  const xTicks = niceTicks(x0, x1, 5).filter((t) => Number.isInteger(t));
  const yTicks = niceTicks(y0, y1, 4);
  const lines = spec.lines.map((l) => {
    const ys = data.map((p) => p[l.key]);
    // Sparse: only the iterations that logged it, so the pen never lifts between them.
    const at = spec.sparse ? xs.map((_, i) => i).filter((i) => ys[i] !== undefined && Number.isFinite(ys[i])) : null;
    const dots = at ? at.map((i) => ({ x: sx(xs[i]), y: sy(ys[i]!) })) : [];
    return { ...l, d: at ? linePath(at.map((i) => xs[i]), at.map((i) => ys[i]), sx, sy) : linePath(xs, ys, sx, sy), dots };
  });
  const band = spec.band ? bandPath(xs, data.map((p) => p[spec.band![0]]), data.map((p) => p[spec.band![1]]), sx, sy) : '';
  const shown = (markers ?? []).filter((m) => m.x >= x0 && m.x <= x1).sort((a, b) => a.x - b.x);
  const placed = layoutMarkers(shown.map((m) => sx(m.x)), shown.map((m) => m.label), width - PAD.right);
  const marks = shown.map((m, i) => ({ ...m, px: sx(m.x), ...placed[i] }));
  return { xs, sx, sy, xTicks, yTicks, lines, band, x0, x1, marks };
}

/** The reference line and its label: at the right end, unless a marker's line runs through it there (then at the left). */
function RefLine({ refLine, sy, width, markerPx }: { refLine: NonNullable<ChartSpec['ref']>; sy: (y: number) => number; width: number; markerPx: readonly number[] }) {
  return (
    <g>
      <line x1={PAD.left} x2={width - PAD.right} y1={sy(refLine.y)} y2={sy(refLine.y)} className="plot-ref" />
      {markerPx.some((px) => px >= width - PAD.right - 6 - refLine.label.length * CHAR_PX) ? (
        <text x={PAD.left + 2} y={sy(refLine.y) - 3} className="plot-tick" textAnchor="start">
          {refLine.label}
        </text>
      ) : (
        <text x={width - PAD.right - 2} y={sy(refLine.y) - 3} className="plot-tick" textAnchor="end">
          {refLine.label}
        </text>
      )}
    </g>
  );
}

/** The hovered iteration's values, beside the cursor. */
function PlotTip({ spec, hp, left, f }: { spec: ChartSpec; hp: MetricPoint; left: number; f: (v: number) => string }) {
  return (
    <div className="plot-tip" style={{ left }}>
      <div className="plot-tip-head">iteration {hp.it}</div>
      {spec.lines.map((l) => (
        <div key={l.key} style={{ color: l.color }}>
          {l.label} <b>{f(hp[l.key])}</b>
        </div>
      ))}
      {spec.band && (
        <div className="muted">
          ± std {f(hp[spec.band[0]])} … {f(hp[spec.band[1]])}
        </div>
      )}
    </div>
  );
}

/** A dot on each line at iteration point `p` (skipping lines it lacks). */
function PointDots({ spec, p, sx, sy, r }: { spec: ChartSpec; p: MetricPoint; sx: (x: number) => number; sy: (y: number) => number; r: number }) {
  return <>{spec.lines.map((l) => (Number.isFinite(p[l.key]) ? <circle key={l.key} cx={sx(p.it)} cy={sy(p[l.key])} r={r} fill={l.color} /> : null))}</>;
}

function Plot({ spec, data, width, height, f, markers }: { spec: ChartSpec; data: MetricPoint[]; width: number; height: number; f: (v: number) => string; markers?: readonly ChartMarker[] }) {
  const [hover, setHover] = useState<number | null>(null);
  const geo = useMemo(() => plotGeometry(data, spec, width, height, markers), [data, spec, width, height, markers]);
  const { sx, sy } = geo;
  const hp = hover !== null ? data[hover] : null;
  const last = data[data.length - 1];
  return (
    <div className="plot">
      <svg
        width={width}
        height={height}
        role="img"
        aria-label={chartSummary(spec, data, f)}
        onMouseMove={(e) => {
          const x = e.clientX - e.currentTarget.getBoundingClientRect().left;
          let best = 0;
          for (let i = 1; i < geo.xs.length; i++) if (Math.abs(sx(geo.xs[i]) - x) < Math.abs(sx(geo.xs[best]) - x)) best = i;
          setHover(best);
        }}
        onMouseLeave={() => setHover(null)}
      >
        <PlotAxes xTicks={geo.xTicks} yTicks={geo.yTicks} sx={sx} sy={sy} width={width} height={height} label={spec.format ? f : tickFmt} />
        {spec.ref && <RefLine refLine={spec.ref} sy={sy} width={width} markerPx={geo.marks.map((m) => m.px)} />}
        <PlotMarkers marks={geo.marks} height={height} />
        {geo.band && <path d={geo.band} fill={spec.lines[0].color} fillOpacity={0.14} stroke="none" />}
        {geo.lines.map((l) => (
          <path key={l.key} d={l.d} fill="none" stroke={l.color} strokeWidth={l.dashed ? 1.3 : 1.9} strokeOpacity={l.dashed ? 0.7 : 1} strokeLinejoin="round" strokeLinecap="round" />
        ))}
        {geo.lines.flatMap((l) => l.dots.map((d, i) => <circle key={`${l.key}-${i}`} cx={d.x} cy={d.y} r={3} fill={l.color} />))}
        {/* The newest value of each line as a dot: the live head, and visible even with one point. */}
        {last && <PointDots spec={spec} p={last} sx={sx} sy={sy} r={2.6} />}
        {hp && (
          <g>
            <line x1={sx(hp.it)} x2={sx(hp.it)} y1={PAD.top} y2={height - PAD.bottom} className="plot-cursor" />
            <PointDots spec={spec} p={hp} sx={sx} sy={sy} r={3} />
          </g>
        )}
      </svg>
      {hp && <PlotTip spec={spec} hp={hp} left={Math.min(width - 150, Math.max(0, sx(hp.it) + 8))} f={f} />}
    </div>
  );
}

/**
 * What a screen reader hears for a chart: each line's latest value, where it started and its
 * range, over how many iterations ("Success rate: success 82% (from 3%, range 3%–85%) over 40 iterations").
 */
export function chartSummary(spec: Pick<ChartSpec, 'title' | 'lines'>, data: readonly MetricPoint[], f: (v: number) => string): string {
  const parts = spec.lines.flatMap((l) => {
    const ys = data.map((p) => p[l.key]).filter((v): v is number => v !== undefined && Number.isFinite(v));
    if (ys.length === 0) return [];
    return [`${l.label} ${f(ys[ys.length - 1])} (from ${f(ys[0])}, range ${f(Math.min(...ys))} to ${f(Math.max(...ys))})`];
  });
  return `${spec.title}: ${parts.length ? parts.join('; ') : 'no values'} over ${data.length} iteration${data.length === 1 ? '' : 's'}`;
}

/** The newest finite value of `key` (a sparse metric's latest, which the last row may lack); NaN when none. */
function latestOf(data: readonly MetricPoint[], key: string): number {
  for (let i = data.length - 1; i >= 0; i--) if (Number.isFinite(data[i][key])) return data[i][key];
  return NaN;
}

/** `markers`: vertical lines at iterations (RL's start after a warm start, each reward-code version); keep the array's identity stable between renders. */
export const MetricChart = memo(function MetricChart({ spec, data: latest, emptyNote, markers }: { spec: ChartSpec; data: MetricPoint[]; emptyNote?: string; markers?: readonly ChartMarker[] }) {
  const ref = useRef<HTMLElement>(null);
  // An emptied history (reset) shows at once; growth goes through the queue.
  const staggered = useStaggered(latest, ref);
  const data = latest.length === 0 ? latest : staggered;
  const last = data[data.length - 1];
  const has = data.some((p) => spec.lines.some((l) => p[l.key] !== undefined));
  const f = spec.format ?? fmt;
  const body = useRef<HTMLDivElement>(null);
  const size = useElementSize(body);
  return (
    <figure ref={ref} className="chart" data-testid={`chart-${spec.id}`} data-points={data.length} data-latest={last ? String(last[spec.lines[0].key] ?? '') : ''}>
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
              {l.label} <b>{last ? f(spec.sparse ? latestOf(data, l.key) : last[l.key]) : '–'}</b>
            </span>
          ))}
        </span>
      </figcaption>
      <div className="chart-body" ref={body}>
        {data.length === 0 ? (
          <div className="chart-empty">{emptyNote ?? 'Press Start or Step to train.'}</div>
        ) : !has ? (
          <div className="chart-empty">{spec.absentNote ?? 'Not produced by this run.'}</div>
        ) : (
          size.width > 0 && <Plot spec={spec} data={data} width={size.width} height={size.height} f={f} markers={markers} />
        )}
      </div>
    </figure>
  );
});
