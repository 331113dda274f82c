/** The "Environments" view: pick an env, read what it is, play it or watch the expert. */
import { useState } from 'react';
import { useStore } from '../store.ts';
import { ErrorBoundary } from '../shell/ErrorBoundary.tsx';
import { EnvPicker } from './EnvPicker.tsx';
import { AgentControls } from './AgentControls.tsx';
import { ExpertControls, SeedControls } from './EpisodeControls.tsx';
import { EpisodeStatus } from './EpisodeStatus.tsx';
import { GridView } from './GridView.tsx';
import { ToolView } from './ToolView.tsx';
import { familyOf } from '../../core/envs/families.ts';

function Description({ text }: { text: string }) {
  const [open, setOpen] = useState(false);
  return (
    <p className={`env-description ${open ? 'open' : ''}`} data-testid="env-description">
      <span className="env-description-text">{text}</span>
      {text.length > 200 && (
        <button type="button" className="link-btn" onClick={() => setOpen(!open)}>
          {open ? 'less' : 'more'}
        </button>
      )}
    </p>
  );
}

function EnvStage() {
  const env = useStore((s) => s.env);
  const episode = useStore((s) => s.episode);
  const catalog = useStore((s) => s.catalog);
  if (catalog.length === 0) {
    return (
      <div className="panel placeholder">
        <h2>No environments yet</h2>
        <p>The grid worlds and tool APIs register themselves as their code lands. Reload to check again.</p>
      </div>
    );
  }
  if (!env) {
    return (
      <div className="panel placeholder">
        <h2>Pick an environment</h2>
        <p>Choose one on the left to see it rendered, play it, or watch the expert solve it.</p>
      </div>
    );
  }
  const spec = env.spec;
  return (
    <div className="stage" data-env-id={spec.id} data-family={spec.family}>
      <header className="stage-head">
        <div className="stage-title">
          <h1>{spec.title}</h1>
          <code className="env-id">{spec.id}</code>
        </div>
        <SeedControls />
      </header>
      <Description key={spec.id} text={spec.description} />
      {episode ? (
        <>
          <div className="status-row">
            <EpisodeStatus spec={spec} episode={episode} />
            <ExpertControls />
          </div>
          <AgentControls spec={spec} />
          {familyOf(spec).view === 'grid' ? <GridView spec={spec} episode={episode} /> : <ToolView spec={spec} episode={episode} />}
        </>
      ) : (
        <div className="panel placeholder">
          <p>The episode could not start; see the message above. Try another seed or environment.</p>
        </div>
      )}
    </div>
  );
}

export function EnvironmentsView() {
  const envId = useStore((s) => s.envId);
  return (
    <div className="env-layout">
      <aside className="sidebar">
        <EnvPicker />
      </aside>
      <main className="main">
        <ErrorBoundary key={envId ?? ''} what="The environment view" onRetry={() => useStore.getState().open({ envId: null })}>
          <EnvStage />
        </ErrorBoundary>
      </main>
    </div>
  );
}
