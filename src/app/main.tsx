/** Entry point: registers the envs, opens the view the URL names, and renders the app. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import '../core/envs/index.ts';
import { App } from './App.tsx';
import { startHashSync } from './hashSync.ts';
import { startShortcuts } from './shell/shortcuts.ts';
import { flushRunRecord } from './train/slice.ts';
import { useStore } from './store.ts';
import { startLessonSync } from './lessons/sync.ts';
import { startPrewarm } from './train/prewarm.ts';
import { useSweep } from './train/sweep.ts';
import { interruptedText } from './train/sweepSaved.ts';
import './styles.css';

startHashSync();
// Alt+S: Start from any view; Alt+L: back to the lesson (listed in the status bar).
startShortcuts();
startLessonSync();
// The training worker's engine loads while the page is idle on the Train view, before Start.
startPrewarm(useStore);
// Runs a closed or reloaded tab left 'running' are listed as interrupted; the deleted ones past
// their undo window are removed.
void useStore.getState().refreshRuns();
// A sweep this tab ran when it was reloaded or closed: said once here; Train → Sweep offers to resume it.
const interrupted = useSweep.getState().interrupted;
if (interrupted) useStore.getState().notify('warning', `${interruptedText(interrupted)} Train → Sweep offers to train the rest.`);
// Best effort: a hidden page may never come back (closed, discarded), so write what waits.
addEventListener('pagehide', () => void flushRunRecord());
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'hidden') void flushRunRecord();
});

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
