/** The stages of a staged run in order, the running one highlighted (what the chart markers delimit). */
import { memo } from 'react';
import type { Stage } from '../../core/presets/schema.ts';
import { stageRows } from './stages.ts';

export const StageStrip = memo(function StageStrip({ stages, at }: { stages: readonly Stage[]; at: number | undefined }) {
  const rows = stageRows(stages, at);
  return (
    <ol className="stage-strip" data-testid="stage-strip" aria-label="Stages of this run">
      {rows.map((r) => (
        <li key={r.index} className={`pipe-stage pipe-stage-${r.state}`} data-testid={`stage-${r.index}`} aria-current={r.state === 'running' ? 'step' : undefined}>
          <span className="pipe-stage-name">
            Stage {r.index}: {r.name}
          </span>
          <span className="pipe-stage-meta">
            {r.kind} · iterations {r.from}–{r.to}
            {r.state === 'running' ? ' · running' : r.state === 'done' ? ' · done' : ''}
          </span>
        </li>
      ))}
    </ol>
  );
});
