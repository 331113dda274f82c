/**
 * The live dashboard, grouped by the three invariants of ARCHITECTURE.md: Outcome, then the three
 * invariants (Exploration, Signal, Shift) each with a health badge, then Speed.
 *
 * The history comes through useDeferredValue: the urgent render after a flush is cheap (the
 * memoised charts skip it), and redrawing the charts happens in an interruptible background
 * render, so the main thread never blocks for long while training streams in.
 */
import { useStartNote } from '../ui/startNote.ts';
import { memo, useDeferredValue, useMemo, type ReactNode } from 'react';
import { isGroupAlgo } from '../../core/algos/registry/index.ts';
import { dashboardCharts, keyChart, WARM } from './dashboardCharts.ts';
import { useStore } from '../store.ts';
import { useRewardLab } from '../rewardLab/rewardLab.ts';
import { versionMarkers } from '../../core/reward/versions.ts';
import { makeEnv } from '../../core/envs/index.ts';
import { VOCAB_SIZE } from '../../core/text/codec.ts';
import { LiveRollout } from './LiveRollout.tsx';
import { explorationHealth, outcomeHealth, shiftHealth, signalHealth, WINDOW, type RunChange, type Verdict } from './health.ts';
import { rewardHealth } from './rewardHealth.ts';
import { FIELD_BY_PATH } from './fields.ts';
import { MetricChart, thin, type ChartMarker, type ChartSpec } from '../ui/MetricChart.tsx';
import type { MetricPoint } from './trainState.ts';
import { StageStrip } from './StageStrip.tsx';
import { stageMarkers } from './stages.ts';

function Badge({ name, v }: { name: string; v: Verdict }) {
  return (
    <div className={`health health-${v.level}`} data-testid={`health-${name.toLowerCase()}`} data-level={v.level} role="status">
      <span className="health-pill">
        <span className="health-dot" aria-hidden />
        {v.label}
      </span>
      <span className="health-text">
        {v.text}
        {v.level !== 'idle' && !v.text.includes('the last') && <span className="muted"> (mean of the last {WINDOW} iterations)</span>}
      </span>
    </div>
  );
}

/** The badges the dashboard always shows, in order (a lesson names them as "the Signal badge"). */
export const BADGES = ['outcome', 'exploration', 'signal', 'shift', 'reward'] as const;

/** The outcome and the three invariants' verdicts at a glance; each links to its section. */
function Summary({ verdicts }: { verdicts: Record<(typeof BADGES)[number], Verdict> }) {
  return (
    <nav className="health-summary" aria-label="Health of the outcome, the three invariants and the reward" title="The three invariants (Exploration, Signal, Shift) are what RL needs to keep learning: the policy keeps trying different things, batches keep comparisons to learn from, and the learner trains on the policy that acted. Outcome and Reward check the task itself.">
      {BADGES.map((k) => (
        <a key={k} href={`#section-${k}`} className={`health-chip health-${verdicts[k].level}`} onClick={(e) => {
          e.preventDefault();
          document.querySelector(`[data-testid="section-${k}"]`)?.scrollIntoView({ behavior: 'smooth', block: 'start' });
        }}>
          <span className="health-dot" aria-hidden />
          <span className="health-chip-name">{k[0].toUpperCase() + k.slice(1)}</span>
          <span className="health-chip-label">{verdicts[k].label}</span>
        </a>
      ))}
    </nav>
  );
}

const Section = memo(function Section({ title, blurb, verdict, specs, data, extra, emptyNote, markers }: { title: string; blurb: string; verdict?: Verdict; specs: ChartSpec[]; data: MetricPoint[]; extra?: ReactNode; emptyNote?: string; markers?: readonly ChartMarker[] }) {
  return (
    <section className="dash-section" data-testid={`section-${title.toLowerCase()}`}>
      <header className="dash-head">
        <h2>{title}</h2>
        <span className="dash-blurb">{blurb}</span>
      </header>
      {verdict && <Badge name={title} v={verdict} />}
      <div className="chart-grid">
        {specs.map((s) => (
          <MetricChart key={s.id} spec={s} data={data} emptyNote={emptyNote} markers={markers} />
        ))}
        {extra}
      </div>
    </section>
  );
});

const LIVE = <LiveRollout />;

/** On phones (train.css shows it below 900 px only), the run's key chart under the run bar: on screen without scrolling while it trains. */
export function KeyChart() {
  const raw = useStore((s) => s.history);
  const status = useStore((s) => s.status);
  const config = useStore((s) => s.running ?? s.draft);
  const checked = useStore((s) => {
    const step = s.armed && s.lessons.find((l) => l.id === s.armed?.lessonId)?.steps[s.armed.step];
    return step && 'all' in step.check ? step.check.all.map((c) => c.metric).join(' ') : '';
  });
  const catalog = useStore((s) => s.catalog);
  const emptyNote = useStartNote();
  const history = useDeferredValue(raw);
  const data = useMemo(() => thin(history), [history]);
  const spec = useMemo(() => {
    try {
      return makeEnv(config.env.id, config.env.kwargs).spec;
    } catch {
      return catalog.find((c) => c.id === config.env.id)?.spec;
    }
  }, [config.env.id, config.env.kwargs, catalog]);
  const tokens = config.model.kind === 'transformer';
  const numActions = tokens ? 0 : spec?.actionSpace.kind === 'discrete' ? spec.actionSpace.n : 0;
  const chart = useMemo(() => {
    const c = keyChart(dashboardCharts(config, spec?.maxSteps ?? 100, numActions, spec?.agents), checked ? checked.split(' ') : []);
    // Its own test id (chart-key-…): the dashboard's copy of the same chart keeps chart-<id>.
    return c && { ...c, id: `key-${c.id}` };
  }, [config, spec, numActions, checked]);
  if (!chart || (status === 'idle' && raw.length === 0)) return null;
  return (
    <section className="key-chart" aria-label="Key chart of this run" data-testid="key-chart">
      <MetricChart spec={chart} data={data} emptyNote={emptyNote} />
    </section>
  );
}

export function Dashboard() {
  const raw = useStore((s) => s.history);
  const warmHistory = useStore((s) => s.warmHistory);
  const warm = useStore((s) => s.warmStart);
  const warmData = useMemo(() => thin(warmHistory.map((w) => ({ it: w.step, 'imitation/ce_loss': w.ceLoss, 'imitation/target_prob_mean': w.targetProb }) as MetricPoint)), [warmHistory]);
  // While a run starts (its phase, or the warm start), the RL charts say so instead of "Press Start".
  const emptyNote = useStartNote();
  // After a warm start, every RL chart marks where RL took over from imitation.
  const warmSteps = warmHistory.length ? warmHistory[warmHistory.length - 1].step : 0;
  // …and each reward-code version of the run (v1, v2, …) marks the iteration it took over.
  const versions = useRewardLab((s) => s.versions);
  const history = useDeferredValue(raw);
  const config = useStore((s) => s.running ?? s.draft);
  // …and a staged run marks where each stage after the first begins.
  const stages = config.stages;
  const markers = useMemo<ChartMarker[]>(
    () => [...(warmSteps && !warm ? [{ x: 1, label: `RL begins (after ${warmSteps} warm-start steps)` }] : []), ...stageMarkers(stages ?? []), ...versionMarkers(versions)],
    [warmSteps, warm, versions, stages],
  );
  // What the person changed mid-run (settings, applied reward code): a fall after one names it.
  const liveChanges = useStore((s) => s.liveChanges);
  const changes = useMemo<RunChange[]>(
    () =>
      [...liveChanges.map((c) => ({ iteration: c.iteration, what: FIELD_BY_PATH.get(c.path)?.label ?? c.path })), ...versions.filter((v) => v.iteration > 0).map((v) => ({ iteration: v.iteration, what: `the reward code (v${v.version})` }))].sort(
        (a, b) => a.iteration - b.iteration,
      ),
    [liveChanges, versions],
  );
  const catalog = useStore((s) => s.catalog);
  const envKwargs = config.env.kwargs;
  // The run's own env (its kwargs change the time limit: door-key at size 8 has 640 steps, not 360).
  const spec = useMemo(() => {
    try {
      return makeEnv(config.env.id, envKwargs).spec;
    } catch {
      return catalog.find((c) => c.id === config.env.id)?.spec;
    }
  }, [config.env.id, envKwargs, catalog]);
  // Token policies (tool envs) choose among vocabulary tokens: no uniform line on the chart, and
  // the health badge reads nats per token against |V| (not a share of ln|A| as for 7 grid actions).
  const tokens = config.model.kind === 'transformer';
  const numActions = tokens ? 0 : spec?.actionSpace.kind === 'discrete' ? spec.actionSpace.n : 0;
  const maxSteps = spec?.maxSteps ?? 100;
  const grouped = isGroupAlgo(config.algo.algo);
  const data = useMemo(() => thin(history), [history]);
  const agents = spec?.agents;
  const specs = useMemo(() => dashboardCharts(config, maxSteps, numActions, agents), [config, maxSteps, numActions, agents]);
  // The Shift badge is green on stale data only when TIS corrects it (the run's own config).
  const tisOn = config.algo.tis.enabled;
  const tisCap = config.algo.tis.cap;
  const verdicts = useMemo(
    () => ({
      outcome: outcomeHealth(history, changes),
      exploration: tokens ? explorationHealth(history, VOCAB_SIZE, true) : explorationHealth(history, numActions || 2),
      signal: signalHealth(history, grouped),
      shift: shiftHealth(history, { tis: tisOn, cap: tisCap }),
      reward: rewardHealth(history),
    }),
    [history, numActions, grouped, tokens, changes, tisOn, tisCap],
  );
  return (
    <div className="dashboard" data-testid="dashboard">
      <Summary verdicts={verdicts} />
      {(stages?.length ?? 0) > 0 && <StageStrip stages={stages} at={history.length ? history[history.length - 1]['pipeline/stage'] : undefined} />}
      {warmData.length > 0 && (
        <Section title="Warm start" blurb={warm ? 'Imitating the expert before RL: the model learns the format and becomes the KL reference.' : 'The imitation phase before RL (done): where the policy started from.'} specs={WARM} data={warmData} />
      )}
      <Section title="Outcome" blurb="Is the agent getting better at the task?" verdict={verdicts.outcome} specs={specs.outcome} data={data} extra={tokens ? undefined : LIVE} emptyNote={emptyNote} markers={markers} />
      {specs.agents.length > 0 && (
        <Section title="Per-agent credit" blurb="Two agents, one shared reward: which agent reaches its part of the task, and how the learning signal is split between them." specs={specs.agents} data={data} emptyNote={emptyNote} markers={markers} />
      )}
      <Section title="Exploration" blurb="Invariant 1 of the three RL needs to keep learning: the policy keeps trying distinct behaviours." verdict={verdicts.exploration} specs={specs.exploration} data={data} emptyNote={emptyNote} markers={markers} />
      <Section title="Signal" blurb="Invariant 2: batches keep comparisons the optimizer can use." verdict={verdicts.signal} specs={specs.signal} data={data} emptyNote={emptyNote} markers={markers} />
      <Section title="Shift" blurb="Invariant 3: the learner trains on the policy that acted." verdict={verdicts.shift} specs={specs.shift} data={data} emptyNote={emptyNote} markers={markers} />
      <Section title="Reward" blurb="Is the shaped reward still measuring the task?" verdict={verdicts.reward} specs={specs.reward} data={data} emptyNote={emptyNote} markers={markers} />
      <Section title="Speed" blurb="Where the time goes." specs={specs.speed} data={data} emptyNote={emptyNote} markers={markers} />
    </div>
  );
}
