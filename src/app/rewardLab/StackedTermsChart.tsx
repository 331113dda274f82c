/**
 * The reward lab's stacked chart: each reward term's contribution per iteration
 * (`reward/<term>/mean`: built-in shaping terms, the task's own reward 'outcome' among them, and
 * the person's terms), positive ones stacked above 0 and negative ones below, with the shaped
 * reward (their sum, reward/mean) as a line and a marker per reward-code version.
 *
 * Plain SVG like MetricChart, and through its per-frame queue: at most MAX_POINTS iterations
 * (thinned), a path per term, well under a millisecond per redraw.
 */
import { memo, useMemo, useRef } from 'react';
import { stackTerms, termsOf } from '../../core/reward/stack.ts';
import { useElementSize } from '../ui/useElementSize.ts';
import { bandPath, linear, linePath, niceTicks, yRange } from '../ui/plot.ts';
import { fmt, layoutMarkers, PAD, PlotAxes, PlotMarkers, thin, tickFmt, useStaggered, type ChartMarker } from '../ui/MetricChart.tsx';
import type { MetricPoint } from '../ui/plot.ts';

/** The task's own reward in green (as on the dashboard); other terms from a palette. */
const TASK_COLOR = '#16803c';
const PALETTE = ['#7c3aed', '#c2410c', '#2563eb', '#0f766e', '#c92a2a', '#a15c00', '#be185d', '#64748b'];

const termLabel = (t: string) => (t === 'outcome' ? 'task (env reward)' : t);

function Plot({ data, terms, colors, width, height, markers }: { data: MetricPoint[]; terms: string[]; colors: string[]; width: number; height: number; markers: readonly ChartMarker[] }) {
  const geo = useMemo(() => {
    const xs = data.map((p) => p.it);
    const s = stackTerms(data, terms);
    const [y0, y1] = yRange([s.min, s.max, 0]);
    const x0 = xs[0] ?? 0;
    const x1 = Math.max(x0 + 1, xs[xs.length - 1] ?? 1);
    const sx = linear(x0, x1, PAD.left, width - PAD.right);
    const sy = linear(y0, y1, height - PAD.bottom, PAD.top);
    // One point alone would draw no band: widen it to a sliver so the first iteration shows.
    const bx = xs.length === 1 ? [xs[0] - 0.02, xs[0] + 0.02] : xs;
    const twice = <T,>(a: T[]) => (xs.length === 1 ? [a[0], a[0]] : a);
    const bands = s.bands.map((b, i) => ({ term: b.term, color: colors[i], d: bandPath(bx, twice(b.lo), twice(b.hi), sx, sy) }));
    const shown = markers.filter((m) => m.x >= x0 && m.x <= x1).sort((a, b) => a.x - b.x);
    const placed = layoutMarkers(shown.map((m) => sx(m.x)), shown.map((m) => m.label), width - PAD.right);
    return {
      sx,
      sy,
      bands,
      total: linePath(xs, s.total, sx, sy),
      yTicks: niceTicks(y0, y1, 4),
      xTicks: niceTicks(x0, x1, 5).filter((t) => Number.isInteger(t)),
      marks: shown.map((m, i) => ({ ...m, px: sx(m.x), ...placed[i] })),
    };
  }, [data, terms, colors, width, height, markers]);
  const { sx, sy } = geo;
  return (
    <svg width={width} height={height} role="img" aria-label={`Reward by term, stacked, over ${data.length} iterations`}>
      <PlotAxes xTicks={geo.xTicks} yTicks={geo.yTicks} sx={sx} sy={sy} width={width} height={height} label={tickFmt} />
      {geo.bands.map((b) => (
        <path key={b.term} d={b.d} fill={b.color} fillOpacity={0.5} stroke={b.color} strokeOpacity={0.8} strokeWidth={0.6} data-term={b.term} />
      ))}
      <line x1={PAD.left} x2={width - PAD.right} y1={sy(0)} y2={sy(0)} stroke="#5b6478" strokeWidth={1} />
      <path d={geo.total} fill="none" stroke="#1f2433" strokeWidth={1.6} strokeLinejoin="round" />
      <PlotMarkers marks={geo.marks} height={height} />
    </svg>
  );
}

export const StackedTermsChart = memo(function StackedTermsChart({ history, markers, emptyNote }: { history: MetricPoint[]; markers: readonly ChartMarker[]; emptyNote?: string }) {
  const ref = useRef<HTMLElement>(null);
  const staggered = useStaggered(history, ref);
  const data = useMemo(() => thin(history.length === 0 ? history : staggered), [history, staggered]);
  const terms = useMemo(() => termsOf(data), [data]);
  // The task's own reward green, the other terms from the palette in the order they appear.
  const colors = useMemo(() => terms.map((t, i) => (t === 'outcome' ? TASK_COLOR : PALETTE[(i - (terms[0] === 'outcome' ? 1 : 0)) % PALETTE.length])), [terms]);
  const body = useRef<HTMLDivElement>(null);
  const size = useElementSize(body);
  const last = data[data.length - 1];
  const help =
    "Each term's mean contribution per episode (reward/<term>/mean), stacked: positive ones above 0, negative ones below. The black line is their sum, the shaped reward the policy optimises (reward/mean). The green band is the task's own reward (the outcome term): when the other bands grow while it does not, the shaping pays for something else.";
  return (
    <figure ref={ref} className="chart reward-stacked" data-testid="chart-reward-stacked" data-bands={terms.length} data-terms={terms.join(',')} data-points={data.length}>
      <figcaption className="chart-head">
        <span className="chart-title">
          Reward by term, stacked
          <span className="help" tabIndex={0} role="note" aria-label={help} data-help={help}>
            ?
          </span>
        </span>
        <span className="chart-values">
          {terms.map((t, i) => (
            <span key={t} className="chart-value" style={{ color: colors[i] }} title={`reward/${t}/mean`}>
              {termLabel(t)} <b>{last ? fmt(last[`reward/${t}/mean`]) : '–'}</b>
            </span>
          ))}
          <span className="chart-value" style={{ color: '#1f2433' }} title="reward/mean">
            sum <b>{last ? fmt(last['reward/mean']) : '–'}</b>
          </span>
        </span>
      </figcaption>
      <div className="chart-body" ref={body}>
        {terms.length === 0 ? (
          <div className="chart-empty">{data.length === 0 ? (emptyNote ?? 'Press Start or Step to train.') : 'No reward term contributed yet.'}</div>
        ) : (
          size.width > 0 && <Plot data={data} terms={terms} colors={colors} width={size.width} height={size.height} markers={markers} />
        )}
      </div>
    </figure>
  );
});
