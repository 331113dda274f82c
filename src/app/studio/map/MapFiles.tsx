/**
 * Where maps come from and go: the shipped examples, maps saved in this browser (IndexedDB,
 * beside the runs), JSON export and import. A file that is not a map is named and refused; the
 * map being edited stays as it was.
 */
import { useCallback, useEffect, useState } from 'react';
import { EXAMPLE_MAPS } from '../../../core/envs/grid/exampleMaps.ts';
import { mapFromJson, mapToJson, parseGridMap, type GridMap } from '../../../core/envs/grid/mapSpec.ts';
import { browserRunStore } from '../../../runtime/storage/browser.ts';
import { deleteDesign, listDesigns, newDesignId, saveDesign, type DesignRecord } from '../../../runtime/storage/designs.ts';
import { download } from '../../runs/download.ts';
import { useStore } from '../../store.ts';

/** A file name from the map's name. */
const fileName = (m: GridMap) => `${m.name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'map'}.json`;

function useSaved(): [DesignRecord[], () => void] {
  const [saved, setSaved] = useState<DesignRecord[]>([]);
  const reload = useCallback(() => {
    const store = browserRunStore();
    if (store) listDesigns(store, 'map').then(setSaved, (e: Error) => useStore.getState().notify('error', `Could not list saved maps: ${e.message}`));
  }, []);
  useEffect(reload, [reload]);
  return [saved, reload];
}

/** The panel's acts: open a map (from a file, the examples or this browser), import JSON text, save in this browser. */
function useMapFiles(map: GridMap, onMap: (m: GridMap) => void) {
  const [saved, reload] = useSaved();
  const [savedId, setSavedId] = useState<string | null>(null);
  const [importError, setImportError] = useState<string | null>(null);
  const notify = useStore((s) => s.notify);

  const open = (m: GridMap, id: string | null) => {
    setImportError(null);
    setSavedId(id);
    onMap(m);
  };
  const importText = (text: string, from: string): boolean => {
    const r = mapFromJson(text);
    if (!r.ok) {
      setImportError(`${from} is not a map: ${r.messages.slice(0, 3).join('; ')}. Your map is unchanged.`);
      return false;
    }
    open(r.map, null);
    notify('info', `Opened "${r.map.name}" from ${from}.`);
    return true;
  };
  const save = async () => {
    const store = browserRunStore();
    if (!store) return notify('error', 'This browser has no IndexedDB here (a private window?): export the map as JSON instead.');
    const id = savedId ?? newDesignId();
    try {
      await saveDesign(store, { id, kind: 'map', name: map.name, updatedAt: Date.now(), data: map });
      setSavedId(id);
      reload();
      notify('info', `Saved "${map.name}" in this browser.`);
    } catch (e) {
      notify('error', `Could not save the map: ${(e as Error).message}. Export it as JSON to keep it.`);
    }
  };
  const openSaved = (d: DesignRecord) => {
    const r = parseGridMap(d.data);
    if (r.ok) open(r.map, d.id);
    else notify('error', `The saved map "${d.name}" is damaged: ${r.messages[0]}.`);
  };
  return { saved, reload, savedId, importError, open, openSaved, importText, save };
}

export function MapFiles({ map, onMap }: { map: GridMap; onMap(m: GridMap): void }) {
  const { saved, reload, savedId, importError, open, openSaved, importText, save } = useMapFiles(map, onMap);
  return (
    <section className="panel studio-panel" aria-labelledby="map-files-title">
      <h2 id="map-files-title">Maps</h2>
      <div className="studio-row">
        <button type="button" className="btn" data-testid="map-save" onClick={() => void save()}>
          {savedId ? 'Save' : 'Save in this browser'}
        </button>
        <button type="button" className="btn" data-testid="map-export" onClick={() => download(fileName(map), mapToJson(map), 'application/json')}>
          Export JSON
        </button>
        <label className="btn file-btn">
          Import JSON
          <input
            type="file"
            accept=".json,application/json"
            className="visually-hidden"
            data-testid="map-import-file"
            onChange={(e) => {
              const f = e.target.files?.[0];
              e.target.value = '';
              if (f) void f.text().then((t) => importText(t, f.name));
            }}
          />
        </label>
      </div>
      <MapPaste importText={importText} />
      {importError && (
        <p className="field-msg" role="alert" data-testid="map-import-error">
          {importError}
        </p>
      )}
      <h3>Examples</h3>
      <ul className="map-list">
        {EXAMPLE_MAPS.map((e) => (
          <li key={e.slug}>
            <button type="button" className="link-btn" data-testid={`map-example-${e.slug}`} onClick={() => open(e.map, null)}>
              {e.map.name}
            </button>
          </li>
        ))}
      </ul>
      <h3>Saved in this browser</h3>
      <SavedMaps saved={saved} onOpen={openSaved} reload={reload} />
    </section>
  );
}

/** A text box to paste map JSON into; emptied once the text opened as a map. */
function MapPaste({ importText }: { importText(text: string, from: string): boolean }) {
  const [paste, setPaste] = useState('');
  return (
    <details className="map-paste">
      <summary>Paste JSON</summary>
      <label htmlFor="map-paste" className="visually-hidden">
        Map JSON
      </label>
      <textarea id="map-paste" data-testid="map-paste" rows={5} value={paste} onChange={(e) => setPaste(e.target.value)} />
      <button type="button" className="btn btn-small" data-testid="map-paste-open" onClick={() => importText(paste, 'the pasted text') && setPaste('')}>
        Open
      </button>
    </details>
  );
}

function SavedMaps({ saved, onOpen, reload }: { saved: DesignRecord[]; onOpen(d: DesignRecord): void; reload(): void }) {
  if (saved.length === 0) return <p className="muted small">None yet.</p>;
  return (
    <ul className="map-list" data-testid="map-saved">
      {saved.map((d) => (
        <li key={d.id}>
          <button type="button" className="link-btn" onClick={() => onOpen(d)}>
            {d.name}
          </button>{' '}
          <span className="muted small">{new Date(d.updatedAt).toLocaleString()}</span>{' '}
          <button type="button" className="btn btn-small" aria-label={`Delete ${d.name}`} onClick={() => void deleteDesign(browserRunStore()!, d.id).then(reload)}>
            Delete
          </button>
        </li>
      ))}
    </ul>
  );
}
