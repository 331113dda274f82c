/** A step's check: what it asks, and (while its setup is on the Train view) how far the live run is. */
import { useMemo } from 'react';
import { useStore } from '../store.ts';
import { describeReading, evaluateCheck } from './check.ts';
import { isDone } from './progress.ts';
import { isMapCheck, type Lesson } from './schema.ts';
import { evaluateMapCheck } from './mapCheck.ts';

const STATE_TEXT = {
  done: 'done',
  checking: 'waiting for the Studio to check the map',
  watching: 'watching the run',
  waiting: 'waiting for the first iteration',
  missed: 'not reached in time: press Reset on the Train view and Start again, or set the step up again',
  'not set up': 'set this step up, then press Start on the Train view (a map step: open the Studio and paint)',
} as const;

export function CheckStatusView({ lesson, step, compact = false }: { lesson: Lesson; step: number; compact?: boolean }) {
  const history = useStore((s) => s.history);
  const armed = useStore((s) => s.armed);
  const done = useStore((s) => isDone(s.lessonProgress, lesson.id, step));
  const check = lesson.steps[step].check;
  const live = armed?.lessonId === lesson.id && armed.step === step;
  const studioMap = useStore((s) => (live && isMapCheck(check) ? s.studioMap : null));
  const studioVerdict = useStore((s) => (live && isMapCheck(check) ? s.studioVerdict : null));
  const status = useMemo(() => {
    if (!live) return null;
    if (isMapCheck(check)) {
      const m = studioMap && evaluateMapCheck(check, studioMap, studioVerdict);
      return m && { state: m.state, streak: 0, need: 1, readings: m.readings };
    }
    const r = evaluateCheck(check, history);
    return { ...r, readings: r.readings.map((x) => ({ text: describeReading(x), holds: x.holds })) };
  }, [live, check, history, studioMap, studioVerdict]);
  const state = done ? 'done' : status ? status.state : 'not set up';
  return (
    <div className={`lesson-check lesson-check-${state.replace(/ /g, '-')}`} data-testid={compact ? 'lesson-banner-status' : 'lesson-check'} data-state={state} role="status">
      <div className="lesson-check-head">
        <span className="lesson-check-mark" aria-hidden>
          {state === 'done' ? '✓' : state === 'missed' ? '!' : '…'}
        </span>
        <span>
          <b>Check:</b> {check.says}. <span className="lesson-check-state">{state === 'watching' && isMapCheck(check) ? 'watching the map in the Studio' : STATE_TEXT[state]}</span>
          {status && state !== 'done' && status.need > 1 && status.streak > 0 && <span className="muted"> ({status.streak} of {status.need} in a row)</span>}
        </span>
      </div>
      {status && !compact && (
        <ul className="lesson-readings">
          {status.readings.map((r, i) => (
            <li key={i} className={r.holds ? 'reading-ok' : 'reading-no'}>
              {r.text}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
