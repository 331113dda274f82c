/**
 * The left column of the Train view: presets one click away, then the run configuration in
 * four panels. Every field has a tooltip and shows parseRunConfig's message under it when the
 * value is wrong; a wrong value never reaches the running experiment.
 */
import { Fragment, memo, useState } from 'react';
import { useStore } from '../store.ts';
import { makeEnv } from '../../core/envs/index.ts';
import type { EnvKwargs } from '../../core/envs/registry.ts';
import { familyOf } from '../../core/envs/families.ts';
import { FIELDS, PANELS, getPath, type FieldDef } from './fields.ts';
import { isHidden, isLocked, lockedClickNotice } from './classroom.ts';

/** A padlock drawn in the text colour (an emoji needs a font the machine may not have). */
function LockIcon() {
  return (
    <svg className="lock-icon" viewBox="0 0 10 12" width="9" height="11" aria-hidden focusable="false">
      <path d="M2.5 5V3.5a2.5 2.5 0 0 1 5 0V5" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <rect x="1" y="5" width="8" height="6.5" rx="1" fill="currentColor" />
    </svg>
  );
}

/** Keys that do not change a value: they may reach a locked control (to move on, or to copy). */
function changesNothing(e: React.KeyboardEvent): boolean {
  return ['Tab', 'Shift', 'Escape', 'Control', 'Meta', 'Alt'].includes(e.key) || ((e.ctrlKey || e.metaKey) && ['c', 'a'].includes(e.key.toLowerCase()));
}

/**
 * Handlers that make a locked control say so: a click, a key that would change it, a paste or a
 * drop is stopped before the control acts and a notice names the control. The control stays
 * focusable (aria-disabled, not disabled), so a keyboard or screen-reader user meets the lock too.
 */
function lockGuard(locked: boolean, say: () => void) {
  if (!locked) return {};
  const stop = (e: React.SyntheticEvent) => {
    e.preventDefault();
    say();
  };
  return {
    onMouseDownCapture: stop,
    onClickCapture: stop,
    onPasteCapture: stop,
    onDropCapture: stop,
    onKeyDownCapture: (e: React.KeyboardEvent) => {
      if (!changesNothing(e)) stop(e);
    },
  };
}

/**
 * A field's help: shown while the pointer is over the "?" or the field has the keyboard focus
 * (train.css), and read out as the field's description (`aria-describedby` = `id`). Not a Tab
 * stop of its own: 26 fields would otherwise cost 26 extra presses on the way to Start.
 */
function Help({ text, id }: { text: string; id: string }) {
  return (
    <>
      <span className="help" aria-hidden data-help={text}>
        ?
      </span>
      <span id={id} className="visually-hidden">
        {text}
      </span>
    </>
  );
}

function formatValue(v: unknown): string {
  if (Array.isArray(v)) return v.join(', ');
  if (v === undefined || v === null) return '';
  return String(v);
}

/** Text → the value handed to validation: numbers when it reads as one, else the raw text (so zod names it). */
function parseText(f: FieldDef, text: string): unknown {
  const t = text.trim();
  if (f.input.kind === 'intList') {
    const parts = t.split(/[\s,]+/).filter(Boolean);
    return parts.map((p) => (/^-?\d+(\.\d+)?$/.test(p) ? Number(p) : p));
  }
  if (t !== '' && Number.isFinite(Number(t))) return Number(t);
  return t;
}

/** A text input that keeps what is typed ("0.00") and resyncs when the value changes elsewhere (a preset). */
function TextField({ f, value, invalid, locked = false, onValue }: { f: FieldDef; value: unknown; invalid: boolean; locked?: boolean; onValue: (v: unknown) => void }) {
  const help = `help-${f.path}`;
  const [text, setText] = useState(formatValue(value));
  const [seen, setSeen] = useState(value);
  if (seen !== value) {
    setSeen(value);
    if (JSON.stringify(parseText(f, text)) !== JSON.stringify(value)) setText(formatValue(value));
  }
  return (
    <input
      id={`field-${f.path}`}
      className="field-input"
      data-testid={`field-${f.path}`}
      value={text}
      inputMode={f.input.kind === 'intList' ? 'text' : 'decimal'}
      aria-invalid={invalid}
      aria-describedby={locked ? `${help} lock-${f.path}` : help}
      aria-disabled={locked || undefined}
      readOnly={locked}
      spellCheck={false}
      onChange={(e) => {
        setText(e.target.value);
        onValue(parseText(f, e.target.value));
      }}
    />
  );
}

/** The env's title with these kwargs, or null when they do not make a valid env. */
function envTitle(id: string, kwargs: EnvKwargs | undefined): string | null {
  if (!kwargs || Object.keys(kwargs).length === 0) return null;
  try {
    return makeEnv(id, kwargs).spec.title;
  } catch {
    return null;
  }
}

const Field = memo(function Field({ f }: { f: FieldDef }) {
  const value = useStore((s) => getPath(s.draft, f.path));
  const errors = useStore((s) => (s.validation.ok ? undefined : s.validation.byField[f.path]));
  const restarts = useStore((s) => s.pendingRestart.includes(f.path));
  // KL is live only while a reference policy exists (β > 0 when the run started).
  const running = useStore((s) => s.running !== null && (f.path !== 'algo.klCoef' || s.running.algo.klCoef > 0));
  const catalog = useStore((s) => s.catalog);
  // The env list matches the policy: each family's envs are listed under its own model kind (grid worlds for the MLP, tool envs for the transformer).
  const modelKind = useStore((s) => s.draft.model.kind);
  // A classroom link can lock a field: it shows its value but cannot be edited.
  const locked = useStore((s) => isLocked(s.classroom, f.path));
  const editField = useStore((s) => s.editField);
  const edit = locked ? () => undefined : editField;
  const notify = useStore((s) => s.notify);
  const guard = lockGuard(locked, () => notify('info', lockedClickNotice(f.label)));
  const describedBy = locked ? `help-${f.path} lock-${f.path}` : `help-${f.path}`;
  // The chosen env's title follows its kwargs ("Door and key 8x8"); the registry id stays.
  const envKwargs = useStore((s) => (f.input.kind === 'env' ? s.draft.env.kwargs : undefined));
  const id = `field-${f.path}`;
  let input;
  if (f.input.kind === 'select' || f.input.kind === 'env') {
    const options =
      f.input.kind === 'env'
        ? catalog.filter((c) => c.spec !== null && familyOf(c.spec).listedUnder === modelKind).map((c) => ({ value: c.id, label: c.id === value ? envTitle(c.id, envKwargs) ?? c.spec!.title : c.spec!.title }))
        : f.input.options;
    input = (
      <select id={id} className="field-input" data-testid={id} value={String(value)} aria-disabled={locked || undefined} aria-describedby={describedBy} onChange={(e) => edit(f.path, e.target.value)}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    );
  } else if (f.input.kind === 'bool') {
    input = <input id={id} type="checkbox" className="field-check" data-testid={id} checked={value === true} aria-disabled={locked || undefined} aria-describedby={describedBy} onChange={(e) => edit(f.path, e.target.checked)} />;
  } else {
    input = <TextField f={f} value={value} invalid={!!errors} locked={locked} onValue={(v) => edit(f.path, v)} />;
  }
  return (
    <div className={`field ${errors ? 'field-bad' : ''} ${locked ? 'field-locked' : ''}`} data-field={f.path}>
      <label htmlFor={id} className="field-label">
        {f.label}
        {f.live && running && <span className="chip chip-live" title="Changes apply to the running experiment at the next update">live</span>}
        {restarts && <span className="chip chip-restart">restarts</span>}
        {locked && (
          <span className="chip chip-locked" data-testid={`locked-${f.path}`} title="Locked by the link this page was opened with">
            <LockIcon /> locked
          </span>
        )}
      </label>
      {locked && (
        <span id={`lock-${f.path}`} className="visually-hidden">
          Locked by the link this page was opened with.
        </span>
      )}
      <div className="field-control" {...guard}>
        {input}
        <Help text={f.help} id={`help-${f.path}`} />
      </div>
      {errors && (
        <div className="field-msg" role="alert" data-testid={`error-${f.path}`}>
          {errors.join('; ')}
        </div>
      )}
    </div>
  );
});

function Presets() {
  const presets = useStore((s) => s.presets);
  const presetId = useStore((s) => s.presetId);
  const choose = useStore((s) => s.choosePreset);
  const hidden = useStore((s) => isHidden(s.classroom, 'presets'));
  const locked = useStore((s) => isLocked(s.classroom, 'presets'));
  const notify = useStore((s) => s.notify);
  if (hidden) return null;
  return (
    <section className="cfg-section" aria-labelledby="presets-h">
      <h2 id="presets-h" className="cfg-title">
        Presets
        {locked && (
          <span className="chip chip-locked" data-testid="locked-presets" title="Locked by the link this page was opened with">
            <LockIcon /> locked
          </span>
        )}
      </h2>
      <div className={`preset-list ${locked ? 'preset-list-locked' : ''}`}>
        {presets.map((p) => (
          <button
            key={p.id}
            type="button"
            className={`preset ${p.id === presetId ? 'preset-on' : ''} ${locked ? 'preset-locked' : ''}`}
            data-testid={`preset-${p.id}`}
            aria-pressed={p.id === presetId}
            // Locked: still focusable and clickable, so the click can say why nothing changes.
            aria-disabled={locked || undefined}
            aria-describedby={locked ? 'presets-lock' : undefined}
            title={p.description}
            onClick={() => (locked ? notify('info', lockedClickNotice('The preset list')) : choose(p.id))}
          >
            <span className="preset-title">{p.title}</span>
            <span className="preset-desc">{p.description}</span>
          </button>
        ))}
      </div>
      {locked && (
        <span id="presets-lock" className="visually-hidden">
          Locked by the link this page was opened with.
        </span>
      )}
    </section>
  );
}

const NONE: string[] = [];

export function ConfigPanel() {
  const draft = useStore((s) => s.draft);
  const other = useStore((s) => (s.validation.ok ? NONE : s.validation.other));
  const classroom = useStore((s) => s.classroom);
  return (
    <div className="cfg" data-testid="train-config">
      <Presets />
      {other.length > 0 && (
        <div className="cfg-other" role="alert">
          {other.map((m) => (
            <div key={m}>{m}</div>
          ))}
        </div>
      )}
      {PANELS.filter((p) => (!p.when || p.when(draft)) && !isHidden(classroom, `panel.${p.id}`)).map((p) => (
        <section key={p.id} className="cfg-section" aria-labelledby={`cfg-${p.id}`} data-testid={`panel-${p.id}`}>
          <h2 id={`cfg-${p.id}`} className="cfg-title">
            {p.title}
          </h2>
          <p className="cfg-blurb">{p.blurb}</p>
          {FIELDS.filter((f) => f.panel === p.id && (!f.when || f.when(draft)) && !isHidden(classroom, f.path)).map((f, i, shown) => {
            const group = f.groupFor?.(draft);
            const heading = group !== undefined && (i === 0 || shown[i - 1].groupFor?.(draft) !== group);
            return (
              <Fragment key={f.path}>
                {heading && <h3 className="cfg-group">{group}</h3>}
                <Field f={f} />
              </Fragment>
            );
          })}
        </section>
      ))}
    </div>
  );
}
