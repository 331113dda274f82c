/**
 * The "Train" view: configuration on the left; on the right the run controls, a prompt when an
 * edit needs a restart, and three tabs (dashboard, GRPO groups, trajectory inspector).
 */
import { useMemo, useState, type ReactNode } from 'react';
import { makeEnv } from '../../core/envs/index.ts';
import type { RunConfig } from '../../core/presets/schema.ts';
import { ErrorBoundary } from '../shell/ErrorBoundary.tsx';
import { useStore } from '../store.ts';
import type { Store } from '../storeTypes.ts';
import { ConfigPanel } from './ConfigPanel.tsx';
import { Dashboard, KeyChart } from './Dashboard.tsx';
import { FIELD_BY_PATH } from './fields.ts';
import { blockingFields } from './config.ts';
import { GroupView } from './GroupView.tsx';
import { fmt } from '../ui/MetricChart.tsx';
import { TRAIN_TABS as TABS, type RunStatus } from './trainState.ts';
import { TrajectoryInspector } from './TrajectoryInspector.tsx';
import { MAX_SEEDS, planSweep, useSweep } from './sweep.ts';
import { startSweep, SweepPanel } from './SweepPanel.tsx';
import { formatWarmEta, warmActivity } from './warmEta.ts';
import { setupBlurb } from './presetBlurb.ts';
import type { Preset } from './config.ts';
import './train.css';
import { RewardLabPanel } from '../rewardLab/RewardLabPanel.tsx';
import { answerReplace, useRewardLab } from '../rewardLab/rewardLab.ts';
import { isHidden, isLocked } from './classroom.ts';

const STATUS_TEXT: Record<RunStatus, string> = {
  idle: 'ready',
  starting: 'building the model…',
  running: 'training',
  pausing: 'pausing after this iteration…',
  paused: 'paused',
  stepping: 'one step…',
  finished: 'finished',
  error: 'stopped by an error',
};

/** Whether the draft can run, and the fields that block it, named as the form names them. */
function useBlockers(): { valid: boolean; blockers: string[] } {
  const validation = useStore((s) => s.validation);
  const blockers = blockingFields(validation, (p) => {
    const f = FIELD_BY_PATH.get(p);
    if (!f) return p;
    // A stage's field says which stage ("2. RL on door-key 8×8 · Iterations").
    const group = f.groupFor?.(useStore.getState().draft);
    return group ? `${group} · ${f.label}` : f.label;
  });
  return { valid: validation.ok, blockers };
}

/** The one main button: Pause or Resume the warm start, Pause a run, or Start (Resume, Train N more, Start a new run). */
function MainRunButton({ valid, blockers }: { valid: boolean; blockers: string[] }) {
  const status = useStore((s) => s.status);
  const draftIterations = useStore((s) => s.draft.iterations);
  const pending = useStore((s) => s.pendingRestart);
  const warm = useStore((s) => s.warmStart);
  const warmPaused = useStore((s) => s.warmPaused);
  const { startRun: start, pauseRun: pause, toggleWarmPause } = useStore.getState();
  const busy = status === 'starting' || status === 'stepping' || status === 'pausing';
  /** A finished run goes on only with its own settings; changed ones (another map, say) start a new run. */
  const extend = status === 'finished' && pending.length === 0;
  const isRunning = status === 'running';
  return status === 'starting' && warm ? (
    <button type="button" className="btn btn-primary run-main" aria-keyshortcuts="Alt+S" data-testid="warm-pause" onClick={toggleWarmPause} title="Pauses the warm start between two of its steps; Reset cancels it">
      {warmPaused ? (
        <>
          <span aria-hidden>▶</span> Resume warm start
        </>
      ) : (
        <>
          <span aria-hidden>❚❚</span> Pause
        </>
      )}
    </button>
  ) : isRunning || status === 'pausing' ? (
    // aria-disabled, not disabled, while busy: a disabled button drops the keyboard focus
    // to <body>, and the same button is Start, then Pause, then Resume.
    <button type="button" className="btn btn-primary run-main" aria-keyshortcuts="Alt+S" data-testid="train-pause" onClick={() => status !== 'pausing' && pause()} aria-disabled={status === 'pausing'}>
      <span aria-hidden>❚❚</span> Pause
    </button>
  ) : (
    <button
      type="button"
      className="btn btn-primary run-main" aria-keyshortcuts="Alt+S"
      data-testid="train-start"
      onClick={() => !busy && void start()}
      aria-disabled={busy || undefined}
      disabled={!valid}
      title={!valid ? `Blocked by ${blockers.join('; ')}` : extend ? `Runs ${draftIterations} more iterations on this run (the Iterations setting), keeping its weights and charts` : status === 'finished' ? 'Starts a new run with these settings (the finished run stays saved in Runs)' : undefined}
    >
      <span aria-hidden>▶</span> {status === 'paused' ? 'Resume' : extend ? `Train ${draftIterations} more` : status === 'finished' ? 'Start a new run' : 'Start'}
    </button>
  );
}

function RunButtons() {
  const status = useStore((s) => s.status);
  const historyEmpty = useStore((s) => s.history.length === 0);
  const sweeping = useSweep((s) => s.status === 'running' || s.status === 'stopping');
  const { valid, blockers } = useBlockers();
  const { stepOnce, resetRun: reset } = useStore.getState();
  const busy = status === 'starting' || status === 'stepping' || status === 'pausing';
  const isRunning = status === 'running';
  return (
    <div className="run-buttons">
      <MainRunButton valid={valid} blockers={blockers} />
      <button type="button" className="btn" data-testid="train-step" onClick={() => void stepOnce()} disabled={busy || isRunning || !valid} title={valid ? 'One rollout and one update, then pause' : `Blocked by ${blockers.join('; ')}`}>
        Step
      </button>
      <button type="button" className="btn" data-testid="train-reset" onClick={reset} disabled={status === 'idle' && historyEmpty} title="Drop the run and its charts; the settings stay">
        Reset
      </button>
      <SeedsButton disabled={!valid || sweeping} />
    </div>
  );
}

/** The run's state, iteration, success, speed, engine and warnings, in one line of facts. */
function RunFacts({ last }: { last: Store['history'][number] | undefined }) {
  const status = useStore((s) => s.status);
  const total = useStore((s) => s.running?.iterations ?? s.draft.iterations);
  const itPerS = useStore((s) => s.itPerS);
  const info = useStore((s) => s.info);
  const skipped = useStore((s) => s.skippedUpdates);
  const warm = useStore((s) => s.warmStart);
  const warmPaused = useStore((s) => s.warmPaused);
  const { valid, blockers } = useBlockers();
  return (
    <div className="run-facts">
      <span className={`run-state run-${status}`}>
        <span className="run-dot" aria-hidden />
        {status === 'starting' && warm ? `warm start: ${warmActivity(warm.step, warm.total, warmPaused)}` : STATUS_TEXT[status]}
      </span>
      {status === 'starting' && warm && (
        <span className="run-fact" title="Cross-entropy and mean probability of the expert's tokens during the imitation warm start">
          expert-token prob <b>{Math.round(warm.targetProb * 100)}%</b>
        </span>
      )}
      {status === 'starting' && warm && <WarmProgress />}
      <span className="run-fact">
        iteration <b>{last?.it ?? 0}</b>
        <span className="muted"> / {total}</span>
      </span>
      <span className="run-fact" title="Success rate of the latest iteration's batch (the badges average the last 3)">
        success <b>{last ? `${Math.round((last['episode/success_rate'] ?? 0) * 100)}%` : '–'}</b>
        <span className="muted"> last iteration</span>
      </span>
      <span className="run-fact" title="Training iterations per second, measured on this page">
        <b>{itPerS > 0 ? fmt(itPerS) : '–'}</b> it/s
      </span>
      {info && (
        <span className="run-fact muted" title={`Model built in ${info.setupS.toFixed(1)} s`}>
          {info.engine.replace('ort-web-', '').toUpperCase()} · {info.params.toLocaleString()} params
        </span>
      )}
      {info?.warmStartLoaded && (
        <span className="run-fact muted" data-testid="warm-start-shipped" title="This config's imitation warm start was trained once ahead of time (npm run warm-start) and loaded instead of trained again: the same weights, seconds instead of minutes.">
          warm start: shipped
        </span>
      )}
      {!valid && (
        <span className="chip chip-warn" data-testid="train-blocked" title={blockers.join('\n')}>
          blocked by {blockers.map((b) => b.split(':')[0]).join(', ')}
        </span>
      )}
      {skipped > 0 && (
        <span className="chip chip-warn" title="The NaN guard skipped an update: the weights were left unchanged">
          {skipped} update{skipped > 1 ? 's' : ''} skipped (NaN)
        </span>
      )}
    </div>
  );
}

function RunBar() {
  const status = useStore((s) => s.status);
  const history = useStore((s) => s.history);
  const itPerS = useStore((s) => s.itPerS);
  const info = useStore((s) => s.info);
  const last = history[history.length - 1];
  const maxSuccess = history.reduce((m, p) => Math.max(m, p['episode/success_rate'] ?? 0), 0);
  return (
    <div
      className="run-bar panel"
      data-testid="train-status"
      data-status={status}
      data-iteration={last?.it ?? 0}
      data-success={last ? String(last['episode/success_rate'] ?? '') : ''}
      data-max-success={String(maxSuccess)}
      data-it-per-s={itPerS.toFixed(3)}
      data-engine={info?.engine ?? ''}
    >
      <RunButtons />
      <RunFacts last={last} />
    </div>
  );
}

/**
 * "Run N seeds": a sweep of no field (the Sweep tab shows it), the draft on N seeds from its own,
 * each saved as its own run and tagged alike, so Runs compares them as mean ± band (how much of a
 * curve is the seed's luck) with their statistics.
 */
function SeedsButton({ disabled }: { disabled: boolean }) {
  const [n, setN] = useState(3);
  const seed = useStore((s) => s.draft.seed);
  const ok = Number.isInteger(n) && n >= 2 && n <= MAX_SEEDS;
  return (
    <span className="seeds-control">
      <button
        type="button"
        className="btn"
        data-testid="train-seeds"
        disabled={disabled || !ok}
        onClick={() => {
          const plan = planSweep(useStore.getState().draft, { fields: [], seeds: `${seed}-${seed + n - 1}` });
          if (plan.ok) void startSweep(plan, useStore.getState().draft.id);
          else useStore.getState().notify('warning', plan.message);
        }}
        title={ok ? `Trains this config on seeds ${seed}–${seed + n - 1} as a sweep (the Sweep tab), several at a time, each saved as a run; Runs compares them as mean ± band` : `Choose 2 to ${MAX_SEEDS} seeds`}
      >
        Run
      </button>
      <input
        type="number"
        className={ok ? '' : 'invalid'}
        data-testid="seeds-count"
        aria-label="How many seeds"
        min={2}
        max={MAX_SEEDS}
        value={Number.isFinite(n) ? n : ''}
        onChange={(e) => setN(e.target.valueAsNumber)}
      />
      <span className="seeds-label">seeds</span>
    </span>
  );
}

/** The warm start's progress bar and the time left at its measured pace (warmEta.ts). */
function WarmProgress() {
  const last = useStore((s) => s.warmStart);
  const eta = useStore((s) => s.warmEta);
  if (!last) return null;
  return (
    <span className="run-fact warm-progress" data-testid="warm-progress">
      <progress value={last.step} max={last.total} aria-label="Warm start progress" />
      <span className="muted" title={eta ? `From the median time per step of the last steps; the middle half of them would give ${fmtS(eta.leftS - eta.spreadS)} to ${fmtS(eta.leftS + eta.spreadS)}` : 'Shown once 10 step times are measured'}>
        {formatWarmEta(eta)}
      </span>
    </span>
  );
}

const fmtS = (s: number) => (s >= 90 ? `${Math.round(s / 60)} min` : `${Math.max(0, Math.round(s))} s`);

/** A link or preset brought reward code while the person's own was applied: keep theirs, or use the link's. */
function RewardReplacePrompt() {
  const replacing = useRewardLab((s) => s.replacing);
  if (!replacing) return null;
  return (
    <div className="restart-bar" role="alertdialog" aria-label="Reward code from the link" data-testid="reward-replace-prompt">
      <span>
        This preset or link carries <b>reward code of its own</b>, which would replace the code you applied. Yours stays saved either way (<i>Restore my code</i> in the reward lab).
      </span>
      <span className="restart-actions">
        <button type="button" className="btn" data-testid="reward-keep-mine" onClick={() => answerReplace(false)}>
          Keep my code
        </button>
        <button type="button" className="btn btn-primary" data-testid="reward-use-link" onClick={() => answerReplace(true)}>
          Use the link's code
        </button>
      </span>
    </div>
  );
}

function RestartPrompt() {
  const pending = useStore((s) => s.pendingRestart);
  const valid = useStore((s) => s.validation.ok);
  const { applyRestart, revertDraft } = useStore.getState();
  if (pending.length === 0) return null;
  const names = pending.map((p) => FIELD_BY_PATH.get(p)?.label ?? p);
  return (
    <div className="restart-bar" role="alertdialog" aria-label="Restart needed" data-testid="restart-prompt">
      <span>
        Changing <b>{names.join(', ')}</b> needs a fresh run: the current one and its charts will be discarded.
        {!valid && ' Fix the highlighted settings first.'}
      </span>
      <span className="restart-actions">
        <button type="button" className="btn" data-testid="restart-cancel" onClick={revertDraft}>
          Keep the current run
        </button>
        <button type="button" className="btn btn-primary" data-testid="restart-confirm" disabled={!valid} onClick={() => void applyRestart()}>
          Restart with new settings
        </button>
      </span>
    </div>
  );
}


function ErrorNote() {
  const error = useStore((s) => s.error);
  if (!error) return null;
  return (
    <div className="restart-bar restart-error" role="alert" data-testid="train-error">
      <span>
        <b>Training stopped:</b> {error}. Change a setting (e.g. the backend) and press Start to try again.
      </span>
    </div>
  );
}

/**
 * What the app (not this folder) puts into the Train view from a lesson: `banner`, the open
 * lesson's banner; `setupStep`, the armed lesson step whose setup is this preset's, if any (its
 * title and text replace the preset's blurb). Passed in so train/ does not import lessons/.
 */
export interface TrainViewProps {
  banner?: ReactNode;
  setupStep?: (s: Store, presetId: string) => { title: string; text: string } | undefined;
}

export function TrainView({ banner, setupStep }: TrainViewProps = {}) {
  const tab = useStore((s) => s.tab);
  const setTab = useStore((s) => s.setTab);
  const presetId = useStore((s) => s.presetId);
  const preset = useStore((s) => s.presets.find((p) => p.id === s.presetId));
  const env = useStore((s) => s.draft.env);
  const otherEnv = useMemo(() => (preset ? otherEnvTitle(preset.config.env, env) : null), [preset, env]);
  // Below ~900 px the presets and settings are a drawer over the charts (train.css).
  const [drawer, setDrawer] = useState(false);
  const rewardHidden = useStore((s) => isHidden(s.classroom, 'panel.reward') || isLocked(s.classroom, 'panel.reward'));
  return (
    <div className={`train-layout${drawer ? ' drawer-open' : ''}`}>
      <aside className="sidebar train-sidebar" id="train-settings" aria-label="Presets and settings">
        <button type="button" className="btn btn-small drawer-close" onClick={() => setDrawer(false)} data-testid="drawer-close">
          Close settings
        </button>
        <ConfigPanel />
      </aside>
      <main className="main train-main">
        {banner}
        <button type="button" className="btn drawer-toggle" aria-expanded={drawer} aria-controls="train-settings" onClick={() => setDrawer(!drawer)} data-testid="drawer-toggle">
          Presets & settings{preset ? `: ${preset.title}` : ''}
        </button>
        <RunBar />
        {tab === 'dashboard' && <KeyChart />}
        <RewardReplacePrompt />
        <RestartPrompt />
        <ErrorNote />
        {/* A classroom link that hides (or locks) the Reward panel hides the reward lab too: both edit the reward. */}
        {tab === 'dashboard' && !rewardHidden && <RewardLabPanel />}
        {preset && tab === 'dashboard' && <SetupBlurbView preset={preset} otherEnv={otherEnv} setupStep={setupStep} key={presetId} />}
        <div className="train-tabs" role="tablist" aria-label="Training views">
          {TABS.map((t) => (
            <button key={t.id} type="button" role="tab" className="train-tab" aria-selected={tab === t.id} data-testid={`tab-${t.id}`} onClick={() => setTab(t.id)}>
              {t.title}
            </button>
          ))}
        </div>
        <ErrorBoundary key={tab} what={`The ${tab} view`} onRetry={() => setTab(tab)}>
          {tab === 'dashboard' && <Dashboard />}
          {tab === 'groups' && <GroupView />}
          {tab === 'trajectories' && <TrajectoryInspector />}
          {tab === 'sweep' && <SweepPanel />}
        </ErrorBoundary>
      </main>
    </div>
  );
}

/** Above the tabs: the preset's description, or the lesson step's own text while its setup is on the form, and what differs from the preset. */
function SetupBlurbView({ preset, otherEnv, setupStep }: { preset: Preset; otherEnv: string | null; setupStep: TrainViewProps['setupStep'] }) {
  const base = useStore((s) => s.base);
  const draft = useStore((s) => s.draft);
  const step = useStore((s) => setupStep?.(s, preset.id));
  const blurb = useMemo(() => setupBlurb(preset, base, draft, step), [preset, base, draft, step]);
  return (
    <p className="preset-blurb" data-testid="preset-blurb" data-lesson-step={step ? 'true' : undefined}>
      {otherEnv !== null && !step ? (
        <>
          <b>{otherEnv}</b>, trained with the setup of the preset <b>{preset.title}</b> (its algorithm, model and settings; not its env).
        </>
      ) : (
        <>
          <b>{blurb.title}.</b> {blurb.text}
        </>
      )}
      {blurb.changes.length > 0 && (
        <span className="muted" data-testid="preset-changes">
          {' '}
          Changed from the preset {preset.title}: {blurb.changes.join('; ')}.
        </span>
      )}
    </p>
  );
}

/**
 * The env's title when the draft trains on another env than its preset's ("Train on this map",
 * a code env, another built-in env), null when it is the preset's own (kwargs edits included). A code env is named, never
 * loaded: its module runs only when the run starts.
 */
function otherEnvTitle(presetEnv: RunConfig['env'], env: RunConfig['env']): string | null {
  // The same built-in env with edited kwargs is still the preset's env; a map or a module in the kwargs is another env.
  const contentInKwargs = env.id === 'grid/custom' || env.id.startsWith('code/');
  if (env.id === presetEnv.id && (!contentInKwargs || JSON.stringify(env.kwargs) === JSON.stringify(presetEnv.kwargs))) return null;
  if (env.id.startsWith('code/')) return 'Your code env';
  if (env.id === 'grid/custom' && typeof env.kwargs.name === 'string') return `The map "${env.kwargs.name}"`;
  try {
    return makeEnv(env.id, env.kwargs).spec.title;
  } catch {
    return env.id;
  }
}
