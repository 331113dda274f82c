/**
 * Builds a classroom link: a lesson (at its current step) or the Train view's current setup,
 * with chosen controls hidden or locked. The link only describes; opening it trains nothing.
 */
import { useMemo, useState } from 'react';
import { useStore } from '../store.ts';
import { formatTrainHash } from '../train/config.ts';
import { FIELDS, PANELS } from '../train/fields.ts';
import { formatClassroom, formatLessonHash, type Classroom } from '../train/classroom.ts';
import { draftForSetup } from './setup.ts';

type Mode = 'hide' | 'lock' | 'show';

function Choice({ id, label, mode = 'show', onMode }: { id: string; label: string; mode?: Mode; onMode: (id: string, m: Mode) => void }) {
  return (
    <div className="cl-row">
      <span className="cl-label">{label}</span>
      {(['show', 'lock', 'hide'] as const).map((m) => (
        <label key={m} className="cl-opt">
          <input type="radio" name={`cl-${id}`} data-testid={`cl-${m}-${id}`} checked={mode === m} onChange={() => onMode(id, m)} />
          {m}
        </label>
      ))}
    </div>
  );
}

export function ClassroomLink() {
  const lessonId = useStore((s) => s.lessonId);
  const lessonStep = useStore((s) => s.lessonStep);
  const lessons = useStore((s) => s.lessons);
  const presetId = useStore((s) => s.presetId);
  const presets = useStore((s) => s.presets);
  const base = useStore((s) => s.base);
  const draft = useStore((s) => s.draft);
  const valid = useStore((s) => s.validation.ok);
  // null: follow what is open (the lesson when one is, else the Train view) until the host picks.
  const [picked, setTarget] = useState<'lesson' | 'train' | null>(null);
  const [modes, setModes] = useState<Record<string, Mode>>({});
  const [copied, setCopied] = useState(false);
  const lesson = lessons.find((l) => l.id === lessonId);
  const target = picked ?? (lesson ? 'lesson' : 'train');
  // The setup the link opens: the lesson step's (its preset and overrides), else the Train view's.
  const setupDraft = target === 'lesson' && lesson ? (draftForSetup((lesson.steps[lessonStep] ?? lesson.steps[0]).setup, presets, draft.backend).draft) : draft;
  const classroom: Classroom = useMemo(
    () => ({
      hide: Object.keys(modes).filter((k) => modes[k] === 'hide'),
      lock: Object.keys(modes).filter((k) => modes[k] === 'lock'),
    }),
    [modes],
  );
  const hash = target === 'lesson' && lesson ? formatLessonHash(lesson.id, lessonStep, classroom) : formatTrainHash(presetId, base, valid ? draft : base) + formatClassroom(classroom);
  const url = `${location.origin}${location.pathname}${location.search}${hash}`;
  const set = (id: string, m: Mode) => {
    setCopied(false);
    setModes((x) => ({ ...x, [id]: m }));
  };
  return (
    <details className="classroom panel" data-testid="classroom-builder">
      <summary>
        <b>Classroom link</b> <span className="muted">for hosts: a link that opens a lesson or a setup with chosen controls hidden or locked</span>
      </summary>
      <div className="cl-target">
        <label>
          <input type="radio" name="cl-target" checked={target === 'lesson'} disabled={!lesson} data-testid="cl-target-lesson" onChange={() => setTarget('lesson')} />
          This lesson{lesson ? `: ${lesson.title}, step ${lessonStep + 1}` : ' (open one first)'}
        </label>
        <label>
          <input type="radio" name="cl-target" checked={target === 'train'} data-testid="cl-target-train" onChange={() => setTarget('train')} />
          The Train view as it is set up now ({presetId}
          {valid ? ' with its changes' : ''})
        </label>
      </div>
      <div className="cl-grid">
        <div className="cl-panel">
          <Choice id="presets" label="Preset list" mode={modes.presets} onMode={set} />
        </div>
        {PANELS.filter((p) => !p.when || p.when(setupDraft)).map((p) => (
          <div key={p.id} className="cl-panel">
            <Choice id={`panel.${p.id}`} label={p.id === 'reward' ? 'Reward panel and reward lab' : `${p.title} panel`} mode={modes[`panel.${p.id}`]} onMode={set} />
            {modes[`panel.${p.id}`] !== 'hide' &&
              // Only the fields this setup shows (an MLP preset has no transformer fields; a run without stages no stage rows).
              FIELDS.filter((f) => f.panel === p.id && (!f.when || f.when(setupDraft))).map((f) => <Choice key={f.path} id={f.path} label={f.groupFor ? `${f.groupFor(setupDraft)} · ${f.label}` : f.label} mode={modes[f.path]} onMode={set} />)}
          </div>
        ))}
      </div>
      <div className="cl-out">
        <input className="field-input cl-url" readOnly value={url} data-testid="classroom-url" onFocus={(e) => e.currentTarget.select()} aria-label="Classroom link" />
        <button
          type="button"
          className="btn btn-primary"
          onClick={() => {
            void navigator.clipboard?.writeText(url).then(() => setCopied(true), () => setCopied(false));
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <a className="btn" href={url} target="_blank" rel="noopener">
          Open in a new tab
        </a>
      </div>
      <p className="muted small">Opening the link shows the lesson or setup with these controls; it never starts training. Students can still edit the address, so hiding is for focus, not for security.</p>
    </details>
  );
}
