/**
 * The Studio: make an environment of your own, check it, play it, train on it, share it.
 * One tab per kind of env; each entry of PANELS is a tab (its id is also the link's `tab=`).
 */
import type { ReactNode } from 'react';
import { useStore } from '../store.ts';
import { LessonBanner } from '../lessons/LessonBanner.tsx';
import { isMapCheck } from '../lessons/schema.ts';
import { ErrorBoundary } from '../shell/ErrorBoundary.tsx';
import { MapTab } from './map/MapTab.tsx';
import { CodeEnvPanel } from './code/CodeEnvPanel.tsx';
import type { StudioTab } from './studioHash.ts';
import './studio.css';

/** The Code tab: code from a link (the hash sync read it) opens read-only and runs only when the person presses Run; a new link opens afresh. */
function CodeTab() {
  const link = useStore((s) => s.codeLink);
  return <CodeEnvPanel key={link?.seq ?? 0} incoming={link && !link.used ? { code: link.code, from: 'link' } : null} onIncomingSettled={useStore.getState().settleCodeLink} />;
}

const PANELS: Record<StudioTab, { title: string; blurb: string; render: () => ReactNode }> = {
  map: { title: 'Map', blurb: 'Paint a grid world: no code.', render: () => <MapTab /> },
  code: {
    title: 'Code',
    blurb: 'Write an environment in JavaScript: checked on save, sandboxed.',
    render: () => <CodeTab />,
  },
};

export function StudioView() {
  const tab = useStore((s) => s.studioTab);
  const setTab = useStore((s) => s.setStudioTab);
  // A lesson step about the map itself shows here, with its live check.
  const mapLesson = useStore((s) => {
    const step = s.armed && s.lessons.find((l) => l.id === s.armed?.lessonId)?.steps[s.armed.step];
    return step ? isMapCheck(step.check) : false;
  });
  const tabs = Object.entries(PANELS) as [StudioTab, (typeof PANELS)[StudioTab]][];
  return (
    <div className="studio">
      <header className="studio-head">
        <h1>Studio</h1>
        <div className="studio-tabs" role="tablist" aria-label="Kind of environment">
          {tabs.map(([id, p]) => (
            <button key={id} type="button" role="tab" id={`studio-tab-${id}`} aria-selected={tab === id} aria-controls={`studio-panel-${id}`} data-testid={`studio-tab-${id}`} className="view-tab" onClick={() => setTab(id)}>
              {p.title}
            </button>
          ))}
        </div>
        <p className="muted small">{PANELS[tab].blurb}</p>
      </header>
      {mapLesson && <LessonBanner />}
      <div role="tabpanel" id={`studio-panel-${tab}`} aria-labelledby={`studio-tab-${tab}`}>
        <ErrorBoundary key={tab} what="The studio" onRetry={() => setTab(tab)}>
          {PANELS[tab].render()}
        </ErrorBoundary>
      </div>
    </div>
  );
}
