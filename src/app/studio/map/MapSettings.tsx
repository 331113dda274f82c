/**
 * The map's size and settings. Each field keeps what the person typed; a value the map schema
 * refuses shows the schema's message under the field and leaves the map as it was.
 */
import { useState } from 'react';
import { gridMapSchema, MAP_SIDE, resizeRows, rowsProblem, zodMessages, type GridMap } from '../../../core/envs/grid/mapSpec.ts';

type Key = 'width' | 'height' | 'viewSize' | 'maxSteps' | 'goalReward' | 'lavaReward' | 'name';

const FIELDS: readonly { key: Key; label: string; help: string; kind: 'int' | 'number' | 'text' }[] = [
  { key: 'name', label: 'Name', help: 'Shown as the env’s title.', kind: 'text' },
  { key: 'width', label: 'Width', help: `Cells across, walls included (${MAP_SIDE.min}–${MAP_SIDE.max}).`, kind: 'int' },
  { key: 'height', label: 'Height', help: `Cells down, walls included (${MAP_SIDE.min}–${MAP_SIDE.max}).`, kind: 'int' },
  { key: 'viewSize', label: 'View size', help: 'Side of the square the agent sees, odd (3–15).', kind: 'int' },
  { key: 'maxSteps', label: 'Step limit', help: 'The episode ends (truncated) after this many steps.', kind: 'int' },
  { key: 'goalReward', label: 'Reward on goal', help: 'Paid on reaching a goal, less 90% of it spread over the step limit (faster is better).', kind: 'number' },
  { key: 'lavaReward', label: 'Reward on lava', help: 'Paid on stepping into lava, which ends the episode (negative punishes).', kind: 'number' },
];

function valueOf(map: GridMap, key: Key): string {
  if (key === 'width') return String(map.rows[0].length);
  if (key === 'height') return String(map.rows.length);
  return String(map[key]);
}

/** The map with `key` set to the typed `text`, or the message that says why not. */
function apply(map: GridMap, key: Key, text: string, kind: 'int' | 'number' | 'text'): { map: GridMap } | { error: string } {
  const v = kind === 'text' ? text : text.trim() === '' ? NaN : Number(text);
  if (key === 'width' || key === 'height') {
    if (!Number.isInteger(v) || (v as number) < MAP_SIDE.min || (v as number) > MAP_SIDE.max) return { error: `must be a whole number from ${MAP_SIDE.min} to ${MAP_SIDE.max}` };
    const w = key === 'width' ? (v as number) : map.rows[0].length;
    const h = key === 'height' ? (v as number) : map.rows.length;
    const rows = resizeRows(map.rows, w, h);
    const p = rowsProblem(rows);
    return p ? { error: p } : { map: { ...map, rows } };
  }
  const r = gridMapSchema.safeParse({ ...map, [key]: v });
  if (r.success) return { map: r.data };
  return { error: zodMessages(r.error).map((m) => m.replace(new RegExp(`^${key}: `), '')).join('; ') };
}

function Field({ map, field, onMap }: { map: GridMap; field: (typeof FIELDS)[number]; onMap(m: GridMap): void }) {
  const current = valueOf(map, field.key);
  const [text, setText] = useState(current);
  const [error, setError] = useState<string | null>(null);
  // A map opened from a file or example (or an edit elsewhere) replaces what was typed.
  const [shown, setShown] = useState(current);
  if (shown !== current) {
    setShown(current);
    setText(current);
    setError(null);
  }
  const id = `map-${field.key}`;
  return (
    <div className="map-field">
      <label htmlFor={id} className="field-label">
        {field.label}
      </label>
      <input
        id={id}
        data-testid={id}
        className="field-input"
        type={field.kind === 'text' ? 'text' : 'number'}
        step={field.kind === 'number' ? 0.1 : 1}
        value={text}
        aria-invalid={error !== null}
        aria-describedby={`${id}-help`}
        onChange={(e) => {
          setText(e.target.value);
          const r = apply(map, field.key, e.target.value, field.kind);
          if ('error' in r) setError(r.error);
          else {
            setError(null);
            onMap(r.map);
          }
        }}
      />
      <span id={`${id}-help`} className="muted small">
        {field.help}
      </span>
      {error && (
        <span className="field-msg" role="alert" data-testid={`${id}-error`}>
          {error}; the map keeps {current}.
        </span>
      )}
    </div>
  );
}

export function MapSettings({ map, onMap }: { map: GridMap; onMap(m: GridMap): void }) {
  return (
    <fieldset className="map-settings">
      <legend>Size and settings</legend>
      {FIELDS.map((f) => (
        <Field key={f.key} map={map} field={f} onMap={onMap} />
      ))}
    </fieldset>
  );
}
