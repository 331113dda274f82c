/**
 * The "Runs" view: every saved run (trained in this browser or imported), with rename, tags,
 * note, delete with undo, export and import; a run opened read-only; and Compare for the ticked
 * runs (any metric, EMA smoothing, x by iteration / env steps / wall time, seeds of one config
 * as mean ± band, and the config fields that differ).
 */
import { useEffect } from 'react';
import { useStore } from '../store.ts';
import './runs.css';
import { RunDetail } from './RunDetail.tsx';
import { StorageLine, ImportButton, UndoBar, RunList } from './RunList.tsx';
import { ComparePanel } from './ComparePanel.tsx';

export function RunsView() {
  const openRun = useStore((s) => s.openRun);
  const unavailable = useStore((s) => s.runsUnavailable);
  const refreshRuns = useStore((s) => s.refreshRuns);
  const live = useStore((s) => s.status === 'running' || s.status === 'stepping' || s.status === 'pausing');
  useEffect(() => {
    void refreshRuns();
    if (!live) return;
    // A run training in this tab: its row's iterations and best success follow.
    const t = setInterval(() => void refreshRuns(), 3000);
    return () => clearInterval(t);
  }, [refreshRuns, live]);
  if (unavailable) {
    return (
      <main className="main runs-main">
        <div className="placeholder">
          <h2>Runs are not saved here</h2>
          <p className="muted">{unavailable}</p>
        </div>
      </main>
    );
  }
  return (
    <main className="main runs-main" data-testid="runs-view">
      <div className="runs-toolbar">
        <h2>Runs</h2>
        <StorageLine />
        <span className="status-spacer" />
        <ImportButton />
      </div>
      <UndoBar />
      {openRun ? (
        <RunDetail />
      ) : (
        <>
          <RunList />
          <ComparePanel />
        </>
      )}
    </main>
  );
}
