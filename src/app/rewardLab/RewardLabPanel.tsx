/**
 * The reward lab's editor in the Train view: a CodeMirror 6 editor for the reward module
 * (JavaScript highlighting, the sandbox's refusals as error markers on their line, completion of
 * the step record's fields after `step.`), Apply, the versions of the run (each one's diff), a
 * chart of each user term's `reward/<term>/mean` and a stacked chart of every term's
 * contribution, both with a marker where each version took over.
 *
 * The code never runs on the page: Apply sends it to the training worker, which evaluates it in
 * a QuickJS sandbox (runtime/rewardSandbox), dry-runs it and answers with its terms or a message.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import { basicSetup, EditorView } from 'codemirror';
import { javascript } from '@codemirror/lang-javascript';
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { autocompletion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { STEP_RECORD_FIELDS } from '../../core/reward/stepRecord.ts';
import { SHAPING_TERMS } from '../../core/reward/shaping.ts';
import { useStore } from '../store.ts';
import { MetricChart, type ChartSpec } from '../ui/MetricChart.tsx';
import { useStartNote } from '../ui/startNote.ts';
import { versionMarkers } from '../../core/reward/versions.ts';
import { restoreOwnCode, useRewardLab } from './rewardLab.ts';
import { StackedTermsChart } from './StackedTermsChart.tsx';
import { RewardVersions } from './VersionDiff.tsx';
import { RescorePanel } from './RescorePanel.tsx';
import './rewardLab.css';

/** Completes `step.` / `s.` followed by a field path with the step record's fields and their docs. */
function stepFields(ctx: CompletionContext): CompletionResult | null {
  const m = ctx.matchBefore(/\b(?:step|s|prev)\.[\w.]*$/);
  if (!m) return null;
  const dot = m.text.indexOf('.');
  return {
    from: m.from + dot + 1,
    options: STEP_RECORD_FIELDS.map((f) => ({ label: f.path, detail: f.doc, type: 'property' })),
    validFor: /^[\w.]*$/,
  };
}

const COLORS = ['#7c3aed', '#0f766e', '#c2410c', '#2563eb', '#c92a2a', '#64748b'];
const BUILT_IN = new Set<string>([...SHAPING_TERMS, 'mean', 'std', 'min', 'max', 'lo', 'hi']);

/** Writes the editor's pending edit to the store at once (Apply reads the store); null while no editor is mounted. */
type FlushRef = React.RefObject<(() => void) | null>;

function Editor({ flushRef }: { flushRef: FlushRef }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const error = useRewardLab((s) => s.error);
  useEffect(() => {
    // The store (and localStorage) hear about edits once typing pauses, not per key: an edit
    // then costs the editor's own update only. Unmounting flushes a pending edit.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      clearTimeout(timer);
      timer = undefined;
      const text = v.state.doc.toString();
      if (text !== useRewardLab.getState().text) useRewardLab.getState().setText(text);
    };
    const v = new EditorView({
      doc: useRewardLab.getState().text,
      parent: host.current!,
      extensions: [
        basicSetup,
        javascript(),
        lintGutter(),
        autocompletion({ override: [stepFields] }),
        // A name for screen readers (the editable region is a textbox with no label of its own).
        EditorView.contentAttributes.of({ 'aria-label': 'Reward code: a JavaScript module whose exports are reward terms' }),
        EditorView.updateListener.of((u) => {
          if (!u.docChanged) return;
          clearTimeout(timer);
          timer = setTimeout(flush, 250);
        }),
      ],
    });
    // The scroller scrolls long code: focusable, so the keyboard can reach and scroll it.
    v.scrollDOM.tabIndex = 0;
    v.scrollDOM.setAttribute('aria-label', 'Reward code editor (scrolls)');
    view.current = v;
    flushRef.current = flush;
    // Text set from outside (a preset or a lesson step that carries reward code) replaces the
    // document; while the person is typing (an edit not yet flushed) their text wins.
    const unsubscribe = useRewardLab.subscribe((s) => {
      if (timer !== undefined || s.text === v.state.doc.toString()) return;
      v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: s.text } });
      // That change came from the store: no pending edit of the person's to flush back (a flush
      // here would undo a second outside change made within its 250 ms, e.g. "Restore my code").
      clearTimeout(timer);
      timer = undefined;
    });
    return () => {
      unsubscribe();
      flush();
      flushRef.current = null;
      v.destroy();
    };
  }, [flushRef]);
  // The sandbox's refusal as a marker on its line (or the first line when it names none).
  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const diags: Diagnostic[] = [];
    if (error) {
      const n = Math.min(Math.max(1, error.line ?? 1), v.state.doc.lines);
      const line = v.state.doc.line(n);
      diags.push({ from: line.from, to: line.to, severity: 'error', message: error.message });
    }
    v.dispatch(setDiagnostics(v.state, diags));
  }, [error]);
  return <div className="reward-editor" data-testid="reward-editor" ref={host} />;
}

/** The run's user terms (reward/<term>/mean keys that are not built-in shaping terms) and the chart of their means. */
function useUserTermsChart(history: readonly Record<string, number>[]) {
  const terms = useMemo(() => {
    const out = new Set<string>();
    for (const p of history) for (const k of Object.keys(p)) {
      const m = /^reward\/(.+)\/mean$/.exec(k);
      if (m && !BUILT_IN.has(m[1])) out.add(m[1]);
    }
    return [...out];
  }, [history]);
  const spec: ChartSpec = useMemo(() => ({
    id: 'reward-user-terms',
    title: 'Your reward terms',
    help: 'reward/<term>/mean: each term of your reward code, summed over an episode and averaged over the iteration\'s episodes. Each marker (v1, v2, …) is where that version of your code took over.',
    lines: terms.map((t, i) => ({ key: `reward/${t}/mean`, label: t, color: COLORS[i % COLORS.length] })),
    absentNote: 'Apply reward code to a run to see its terms here.',
  }), [terms]);
  return { terms, spec };
}

/**
 * Closed until there is code to read: open, it pushes the dashboard a panel's height down.
 * Code applied from outside (a preset or lesson step that carries some) opens it.
 */
function useOpenWhenApplied(applied: string): [boolean, (open: boolean) => void] {
  const [open, setOpen] = useState(applied.trim() !== '');
  const [seenApplied, setSeenApplied] = useState(applied);
  if (seenApplied !== applied) {
    setSeenApplied(applied);
    if (applied.trim() !== '') setOpen(true);
  }
  return [open, setOpen];
}

export function RewardLabPanel() {
  const versions = useRewardLab((s) => s.versions);
  const error = useRewardLab((s) => s.error);
  const problems = useRewardLab((s) => s.problems);
  const applied = useRewardLab((s) => s.applied);
  const [open, setOpen] = useOpenWhenApplied(applied);
  const flushRef = useRef<(() => void) | null>(null);
  return (
    <details className="reward-lab panel" data-testid="reward-lab" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary className="reward-lab-head">
        Reward lab{' '}
        <span className="muted">
          — write reward terms as code; they run sandboxed (QuickJS) in the training worker, on grid and tool (token) runs alike
        </span>
      </summary>
      <div className="reward-lab-body">
        <div className="reward-lab-code">
          <Editor flushRef={flushRef} />
          <RewardLabActions flush={() => flushRef.current?.()} />
          {error && (
            <div className="reward-lab-error" role="alert" data-testid="reward-error">
              {error.message}
            </div>
          )}
          {problems.length > 0 && (
            <ul className="reward-lab-problems" data-testid="reward-problems">
              {problems.map((p, i) => (
                <li key={i}>{p}</li>
              ))}
            </ul>
          )}
          <RewardVersions versions={versions} />
        </div>
        <RewardLabCharts />
      </div>
      <RescorePanel flush={() => flushRef.current?.()} />
    </details>
  );
}

/** Apply (to this run while one is live), Restore my code, and which version scores the run. */
function RewardLabActions({ flush }: { flush(): void }) {
  // Narrow selectors: typing changes `text` on every key, and only `unsaved` depends on it.
  const versions = useRewardLab((s) => s.versions);
  const applying = useRewardLab((s) => s.applying);
  const applied = useRewardLab((s) => s.applied);
  const mine = useRewardLab((s) => s.mine);
  const unsaved = useRewardLab((s) => s.text !== s.applied);
  const status = useStore((s) => s.status);
  const applyRewardCode = useStore((s) => s.applyRewardCode);
  const latest = versions[versions.length - 1];
  const live = status === 'running' || status === 'paused' || status === 'pausing' || status === 'stepping' || status === 'finished';
  return (
    <div className="reward-lab-actions">
      <button type="button" className="btn btn-primary" data-testid="reward-apply" disabled={applying} onClick={() => {
          flush();
          void applyRewardCode();
        }}>
        {applying ? 'Checking…' : live ? 'Apply to this run' : 'Apply'}
      </button>
      {mine.trim() !== '' && applied !== mine && !live && (
        <button type="button" className="btn" data-testid="reward-restore-mine" title="Put the reward code you last applied yourself back in the editor and apply it" onClick={restoreOwnCode}>
          Restore my code
        </button>
      )}
      <span className="muted" data-testid="reward-status" data-version={latest?.version ?? 0}>
        {latest
          ? `v${latest.version} scores this run since iteration ${latest.iteration + 1}${latest.terms.length ? ` (${latest.terms.join(', ')})` : ''}`
          : applied.trim()
            ? 'saved: the next run starts with this code'
            : 'no reward code in use'}
        {unsaved ? ' · edited, not applied' : ''}
      </span>
    </div>
  );
}

/** Each user term's mean and every term's stacked contribution, marked where each version took over. */
function RewardLabCharts() {
  const versions = useRewardLab((s) => s.versions);
  const history = useStore((s) => s.history);
  const emptyNote = useStartNote();
  const { terms, spec } = useUserTermsChart(history);
  const markers = useMemo(() => versionMarkers(versions), [versions]);
  return (
    <div className="reward-lab-charts">
      <div className="reward-lab-chart" data-testid="reward-chart">
        {terms.length > 0 ? (
          <MetricChart spec={spec} data={history} markers={markers} emptyNote={emptyNote} />
        ) : (
          <div className="chart-empty" data-testid="reward-chart-empty">
            {spec.absentNote}
          </div>
        )}
      </div>
      <StackedTermsChart history={history} markers={markers} emptyNote={emptyNote} />
    </div>
  );
}
