/** The app shell: header with the views, the active view, and the status bar. */
import { useEffect, useState } from 'react';
import { BackendStatus } from './shell/BackendStatus.tsx';
import { Notices } from './shell/Notices.tsx';
import { EnvironmentsView } from './env/EnvironmentsView.tsx';
import { TrainView } from './train/TrainView.tsx';
import { RunsView } from './runs/RunsView.tsx';
import { LessonsView } from './lessons/LessonsView.tsx';
import { useStore } from './state/store.ts';
import type { ViewId } from './state/storeTypes.ts';
import { CodeEnvPanel } from './studio/code/CodeEnvPanel.tsx';
import { readCodeLink } from './studio/code/link.ts';

// Read before the hash sync rewrites the hash (main.tsx starts it after importing this module).
// Temporary mount for the code tab until the studio shell hosts it: `#studio-code[&code=…]`.
const CODE_LINK = readCodeLink(window.location.hash);

/** The views in the header nav. */
const VIEWS: readonly { id: ViewId; title: string }[] = [
  { id: 'environments', title: 'Environments' },
  { id: 'train', title: 'Train' },
  { id: 'runs', title: 'Runs' },
  { id: 'lessons', title: 'Lessons' },
];

export function App() {
  const envId = useStore((s) => s.envId);
  const seed = useStore((s) => s.seed);
  const active = useStore((s) => s.view);
  const setView = useStore((s) => s.setView);
  const runStatus = useStore((s) => s.status);
  // Leaving (close, reload, navigate) stops the run: it is saved up to its last iteration and
  // listed as interrupted, but cannot go on yet, so the page asks first.
  const holdsRun = ['starting', 'running', 'pausing', 'stepping', 'paused'].includes(runStatus);
  useEffect(() => {
    if (!holdsRun) return;
    const ask = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = '';
    };
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, [holdsRun]);
  // Below ~900 px the view tabs fold into a menu (styles.css).
  const [menuOpen, setMenuOpen] = useState(false);
  const [codeStudio, setCodeStudio] = useState(CODE_LINK.kind !== 'none');
  const title = VIEWS.find((v) => v.id === active)?.title ?? '';
  /** The skip link: on Train, to the run button (Start / Pause); elsewhere, to the view itself. */
  const skip = (e: React.MouseEvent) => {
    e.preventDefault();
    const target = document.querySelector<HTMLElement>(active === 'train' ? '.run-main' : '#view-content');
    target?.focus();
  };
  return (
    <div className={`app${menuOpen ? ' menu-open' : ''}`}>
      <a className="skip-link" href="#view-content" onClick={skip} data-testid="skip-link">
        {active === 'train' ? 'Skip to Start' : `Skip to ${title}`}
      </a>
      <header className="app-header">
        <div className="brand">
          <svg className="brand-mark" viewBox="0 0 24 24" aria-hidden>
            <rect x="2" y="2" width="20" height="20" rx="5" fill="var(--accent)" />
            <path d="M8 7 L17 12 L8 17 L10.5 12 Z" fill="#fff" />
          </svg>
          <span className="brand-name">Agentic RL Playground</span>
        </div>
        <button type="button" className="menu-toggle btn btn-small" aria-expanded={menuOpen} aria-controls="views-nav" data-testid="menu-toggle" onClick={() => setMenuOpen(!menuOpen)}>
          {title} <span aria-hidden>▾</span>
          <span className="visually-hidden"> (views menu)</span>
        </button>
        <nav className="views" id="views-nav" aria-label="Views">
          {VIEWS.map((v) => (
            <button
              key={v.id}
              type="button"
              className="view-tab"
              data-testid={`view-${v.id}`}
              aria-current={v.id === active && !codeStudio ? 'page' : undefined}
              onClick={() => {
                setMenuOpen(false);
                setCodeStudio(false);
                setView(v.id);
              }}
            >
              {v.title}
            </button>
          ))}
          <button type="button" className="view-tab" data-testid="view-studio-code" aria-current={codeStudio ? 'page' : undefined} onClick={() => (setMenuOpen(false), setCodeStudio(true))}>
            Code env
          </button>
        </nav>
      </header>
      <Notices />
      <div className="app-body" id="view-content" tabIndex={-1}>
        {/* Each view has one h1: Environments' is the env's title and Lessons' the lesson's; Train and Runs get theirs here. */}
        {codeStudio && (
          <div className="code-env-view">
            <h1 className="code-env-title">Code env</h1>
            <CodeEnvPanel incoming={CODE_LINK.kind === 'code' ? { code: CODE_LINK.code, from: 'link' } : null} onTrain={() => setCodeStudio(false)} />
          </div>
        )}
        {!codeStudio && (active === 'train' || active === 'runs') && <h1 className="visually-hidden">{title}</h1>}
        {!codeStudio && active === 'environments' && <EnvironmentsView />}
        {!codeStudio && active === 'train' && <TrainView />}
        {!codeStudio && active === 'runs' && <RunsView />}
        {!codeStudio && active === 'lessons' && <LessonsView />}
      </div>
      <footer className="status-bar">
        <BackendStatus />
        <span className="status-item muted">{crossOriginIsolated ? 'cross-origin isolated' : 'not cross-origin isolated'}</span>
        <span className="status-spacer" />
        {active === 'environments' && envId && (
          <span className="status-item muted" title="This view's link reproduces it">
            {envId} · seed {seed}
          </span>
        )}
      </footer>
    </div>
  );
}
