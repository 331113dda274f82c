/** Compare's statistics panel: per-config IQM and mean with intervals, P(X > Y), a performance profile. */
import { memo, useMemo } from 'react';
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { Interval } from '../../core/runs/stats.ts';
import { compareStats } from './compareStats.ts';
import { PALETTE, type ChartRun } from './RunCharts.tsx';

const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '—');
const iv = (i: Interval) => `${f3(i.value)} [${f3(i.lo)}, ${f3(i.hi)}]`;

export const CompareStatsPanel = memo(function CompareStatsPanel({ runs, metric }: { runs: readonly ChartRun[]; metric: string }) {
  const stats = useMemo(() => compareStats(runs, metric), [runs, metric]);
  return (
    <div className="compare-stats" data-testid="compare-stats">
      <h4>Statistics across seeds</h4>
      <p className="muted small">
        Each run&apos;s score is the mean of <span className="mono">{metric}</span> over its last 10% of iterations. Runs that differ only in the seed are one config. IQM is the interquartile
        mean (the middle half of the scores: robust to one lucky or failed seed); [brackets] are 95% stratified-bootstrap intervals (Agarwal et al. 2021), as <span className="mono">npm run sweep</span> prints them.
      </p>
      <div className="stats-scroll" tabIndex={0} role="region" aria-label="Statistics per config">
        <table className="diff-table" data-testid="stats-table">
          <caption className="visually-hidden">IQM and mean of each config&apos;s run scores, with 95% intervals</caption>
          <thead>
            <tr>
              <th>config</th>
              <th>runs</th>
              <th>IQM [95% interval]</th>
              <th>mean [95% interval]</th>
            </tr>
          </thead>
          <tbody>
            {stats.groups.map((g) => (
              <tr key={g.label} data-testid="stats-row" data-label={g.label}>
                <td className="mono">{g.label}</td>
                <td title={g.runs.map((r) => `${r.name}: ${f3(r.score)}`).join('\n')}>{g.summary.runs}</td>
                <td className="mono" data-testid="stats-iqm">{iv(g.summary.iqm)}</td>
                <td className="mono" data-testid="stats-mean">{iv(g.summary.mean)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {stats.groups.length > 1 && <ImprovementTable stats={stats} />}
      {stats.profile.length > 1 && <ProfileChart stats={stats} />}
    </div>
  );
});

type Stats = ReturnType<typeof compareStats>;

/** P(row > column) for every pair of configs, with its interval. */
function ImprovementTable({ stats }: { stats: Stats }) {
  const p = (x: string, y: string) => stats.improvement.find((e) => e.x === x && e.y === y)?.p;
  return (
    <div className="stats-scroll" tabIndex={0} role="region" aria-label="Probability of improvement">
      <table className="diff-table" data-testid="poi-table">
        <caption>Probability of improvement P(row &gt; column): the chance a run of the row&apos;s config scores above a run of the column&apos;s (½ = no difference)</caption>
        <thead>
          <tr>
            <th>P(row &gt; column)</th>
            {stats.groups.map((g) => (
              <th key={g.label} className="mono">{g.label}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {stats.groups.map((a) => (
            <tr key={a.label}>
              <th className="mono">{a.label}</th>
              {stats.groups.map((b) => {
                const v = a === b ? undefined : p(a.label, b.label);
                return (
                  <td key={b.label} className="mono" data-testid="poi-cell" data-x={a.label} data-y={b.label}>
                    {v ? iv(v) : '—'}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The fraction of each config's runs scoring above each threshold τ, as stepped lines. */
function ProfileChart({ stats }: { stats: Stats }) {
  const chart = stats.profile.map((r) => ({ tau: r.tau, ...Object.fromEntries(Object.entries(r.fractions).map(([k, v]) => [k, v.value])) }));
  return (
    <figure className="profile" data-testid="profile-chart">
      <figcaption className="small">Performance profile: the fraction of each config&apos;s runs scoring above each threshold (higher and further right is better)</figcaption>
      <ResponsiveContainer width="100%" height={200}>
        <LineChart data={chart} margin={{ top: 8, right: 16, bottom: 4, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e5e7eb" />
          <XAxis dataKey="tau" type="number" domain={['dataMin', 'dataMax']} tickFormatter={(v: number) => v.toFixed(2)} label={{ value: 'score threshold τ', position: 'insideBottom', offset: -2, fontSize: 11 }} height={36} />
          <YAxis domain={[0, 1]} tickFormatter={(v: number) => v.toFixed(1)} width={36} />
          <Tooltip formatter={(v) => (typeof v === 'number' ? v.toFixed(2) : String(v))} labelFormatter={(t) => `τ = ${Number(t).toFixed(3)}`} />
          <Legend />
          {stats.groups.map((g, i) => (
            <Line key={g.label} dataKey={g.label} type="stepAfter" stroke={PALETTE[i % PALETTE.length]} dot={false} isAnimationActive={false} />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </figure>
  );
}
