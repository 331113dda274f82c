/**
 * The studio's Map tab: paint a grid world (no code), see at once whether it can be solved,
 * play it, and train on it. The map lives in the store (and so in the link); an edit that would
 * break it is refused with the reason and the map stays as it was.
 */
import { useState } from 'react';
import { AGENT_CHARS } from '../../../core/envs/grid/objects.ts';
import { DIR_NAMES } from '../../../core/envs/grid/view.ts';
import { paintCell, rowsProblem, type GridMap } from '../../../core/envs/grid/mapSpec.ts';
import { useStore } from '../../store.ts';
import { keepFocus } from '../../env/EpisodeControls.tsx';
import { MapChecks } from './MapChecks.tsx';
import { MapEditor } from './MapEditor.tsx';
import { MapFiles } from './MapFiles.tsx';
import { MapPlay } from './MapPlay.tsx';
import { MapSettings } from './MapSettings.tsx';
import { TOOLS, toolChar, type Tool } from './tools.ts';

/** The start turned to `heading` in place. */
function turnStart(rows: readonly string[], heading: number): string[] {
  return rows.map((r) => [...r].map((c) => (AGENT_CHARS.includes(c) ? AGENT_CHARS[heading] : c)).join(''));
}

function Palette({ tool, heading, onTool, onHeading }: { tool: Tool; heading: number; onTool(t: Tool): void; onHeading(h: number): void }) {
  return (
    <div className="map-palette" role="group" aria-label="Tiles">
      {TOOLS.map((t) => (
        <button key={t.id} type="button" className={`btn btn-small tile-btn tile-${t.id}`} aria-pressed={tool === t.id} data-testid={`tool-${t.id}`} onClick={() => onTool(t.id)}>
          <kbd>{t.key}</kbd> {t.title}
        </button>
      ))}
      <label htmlFor="map-heading" className="field-label">
        Start faces
      </label>
      <select id="map-heading" className="field-input map-heading" data-testid="map-heading" value={heading} onChange={(e) => onHeading(Number(e.target.value))}>
        {DIR_NAMES.map((d, i) => (
          <option key={d} value={i}>
            {d}
          </option>
        ))}
      </select>
    </div>
  );
}

export function MapTab() {
  const map = useStore((s) => s.studioMap);
  const setMap = useStore((s) => s.setStudioMap);
  const [tool, setTool] = useState<Tool>('wall');
  const start = map.rows.join('').split('').find((c) => AGENT_CHARS.includes(c));
  const heading = Math.max(0, AGENT_CHARS.indexOf(start ?? '>'));
  const [refusal, setRefusal] = useState<string | null>(null);
  const [playing, setPlaying] = useState(false);

  const edit = (m: GridMap) => {
    setRefusal(null);
    setMap(m);
  };
  const onPaint = (x: number, y: number) => {
    const rows = paintCell(map.rows, x, y, toolChar(tool, heading));
    if (rows.join('/') === map.rows.join('/')) return;
    const p = rowsProblem(rows);
    if (p) setRefusal(`Not painted: ${p}.${p.includes('agent start') ? ' Move the start by painting it elsewhere (tile 7).' : ''}`);
    else edit({ ...map, rows });
  };
  const onHeading = (h: number) => edit({ ...map, rows: turnStart(map.rows, h) });

  return (
    <div className="studio-map">
      <section className="panel studio-panel studio-draw" aria-labelledby="map-draw-title">
        <header className="panel-head">
          <h2 id="map-draw-title">{playing ? 'Play' : 'Draw'}: {map.name}</h2>
          <button type="button" className="btn" data-testid="map-play-toggle" aria-pressed={playing} {...keepFocus} onClick={() => setPlaying(!playing)}>
            {playing ? 'Back to drawing' : 'Play this map'}
          </button>
        </header>
        {playing ? (
          <MapPlay map={map} />
        ) : (
          <>
            <Palette tool={tool} heading={heading} onTool={setTool} onHeading={onHeading} />
            <MapEditor rows={map.rows} tool={tool} heading={heading} onPaint={onPaint} onTool={setTool} onTurn={() => onHeading((heading + 1) & 3)} />
            {refusal && (
              <p className="field-msg" role="alert" data-testid="map-refusal">
                {refusal}
              </p>
            )}
            <MapSettings map={map} onMap={edit} />
          </>
        )}
      </section>
      <div className="studio-side">
        <MapChecks map={map} />
        <MapFiles map={map} onMap={edit} />
      </div>
    </div>
  );
}
