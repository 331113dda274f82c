/**
 * The "Lessons" view: the lessons with their progress on the left; on the right the open
 * lesson's current step (what to do, what to watch, its check), previous / next, and the
 * classroom-link builder for hosts.
 */
import { useStore } from '../store.ts';
import { ClassroomLink } from './ClassroomLink.tsx';
import { CheckStatusView } from './CheckStatusView.tsx';
import { isDone } from './progress.ts';
import { isMapCheck, type Lesson } from './schema.ts';
import { actThenFocus, LESSON_ACTION, RUN_BUTTON, SHORTCUTS } from '../shell/shortcuts.ts';
import './lessons.css';

const BADGE_TITLE = { outcome: 'Outcome', exploration: 'Exploration', signal: 'Signal', shift: 'Shift', reward: 'Reward' } as const;

function LessonList() {
  const lessons = useStore((s) => s.lessons);
  const progress = useStore((s) => s.lessonProgress);
  const lessonId = useStore((s) => s.lessonId);
  const openLesson = useStore((s) => s.openLesson);
  return (
    <nav className="lesson-list" aria-label="Lessons">
      <h2 className="cfg-title">Lessons</h2>
      {lessons.map((l, i) => {
        const n = (progress.done[l.id] ?? []).filter((k) => k < l.steps.length).length;
        return (
          <button key={l.id} type="button" className={`lesson-item ${l.id === lessonId ? 'lesson-item-on' : ''}`} data-testid={`lesson-item-${l.id}`} aria-current={l.id === lessonId ? 'true' : undefined} onClick={() => openLesson(l.id)}>
            <span className="lesson-item-title">
              {i + 1}. {l.title}
            </span>
            <span className="lesson-item-meta">
              <span className={`lesson-progress ${n === l.steps.length ? 'lesson-progress-done' : ''}`} data-testid={`lesson-progress-${l.id}`} data-done={n}>
                {n === l.steps.length ? '✓ done' : `${n} / ${l.steps.length} steps`}
              </span>
              {l.badge && <span className="chip">{BADGE_TITLE[l.badge]} badge</span>}
            </span>
          </button>
        );
      })}
      <p className="muted small lesson-note">Progress is kept in this browser.</p>
    </nav>
  );
}

/**
 * The start page: Lessons with no lesson open, where a first visit without a link lands. It says
 * what the playground is and offers the first lesson and the first preset, one click each.
 */
function StartPage() {
  const first = useStore((s) => s.lessons[0]);
  const preset = useStore((s) => s.presets[0]);
  const openLesson = useStore((s) => s.openLesson);
  return (
    <div className="lesson-empty start-page panel" data-testid="lesson-empty">
      <h1>Train an agent in this tab, and watch it learn</h1>
      <p>
        The Agentic RL Playground trains small agents by reinforcement learning right here in the browser: no server, nothing to install. Live charts show the learning, and five badges say in one sentence what they see (is success holding, is the policy still exploring, does the reward
        still track the task) and what to try.
      </p>
      <p>
        Each lesson is a few short training runs that make one thing visible. Every step sets up the Train view for you; you press Start, and the step ticks itself off when the live metrics show what it is about.
      </p>
      <div className="start-actions">
        {first && (
          <button type="button" className="btn btn-primary" data-testid="start-first-lesson" onClick={() => actThenFocus(() => openLesson(first.id), LESSON_ACTION)}>
            Start lesson 1: {first.title}
          </button>
        )}
        {preset && (
          <button type="button" className="btn" data-testid="start-first-preset" onClick={() => actThenFocus(() => useStore.getState().openTrain(`#view=train&preset=${encodeURIComponent(preset.id)}`), RUN_BUTTON)} title="Opens the Train view with this preset; training starts when you press Start">
            Or train the first preset: {preset.title}
          </button>
        )}
      </div>
      <p className="muted small">
        The other lessons are listed here too. <b>Environments</b> (in the header) lets you play each env by hand; the <b>Studio</b> builds maps and envs; <b>Runs</b> keeps every run. From any view, <kbd>{SHORTCUTS.start.keys}</kbd> goes to Start.
      </p>
    </div>
  );
}

type LessonStep = Lesson['steps'][number];

/** The lesson's steps as tabs, each ticked once done. */
function StepTabs({ lesson, stepIdx }: { lesson: Lesson; stepIdx: number }) {
  const progress = useStore((s) => s.lessonProgress);
  const goStep = useStore((s) => s.goStep);
  return (
    <ol className="lesson-steps" aria-label="Steps">
      {lesson.steps.map((s, k) => (
        <li key={k}>
          <button type="button" className={`lesson-step-tab ${k === stepIdx ? 'on' : ''}`} aria-current={k === stepIdx ? 'step' : undefined} data-testid={`lesson-step-${k + 1}`} data-done={isDone(progress, lesson.id, k)} onClick={() => goStep(k)}>
            <span className="lesson-step-mark" aria-hidden>
              {isDone(progress, lesson.id, k) ? '✓' : k + 1}
            </span>
            {s.title}
          </button>
        </li>
      ))}
    </ol>
  );
}

/** Set up: the Studio for a map step, else the Train view with the step's preset and overrides (isArmed: this step is the one set up). */
function StepSetupRow({ step, isArmed }: { step: LessonStep; isArmed: boolean }) {
  const hasRun = useStore((s) => s.status !== 'idle' || s.history.length > 0);
  const setUpStep = useStore((s) => s.setUpStep);
  return (
    <div className="lesson-setup-row">
      {isMapCheck(step.check) ? (
        <>
          <button type="button" className="btn btn-primary" data-testid="lesson-setup" onClick={() => actThenFocus(setUpStep, '[data-testid=map-editor]')} title="Opens the Studio's Map tab; the check reads the map as you paint it">
            Open the Studio
          </button>
          <span className="muted small">The check reads the map in the Studio as you paint it.</span>
        </>
      ) : (
        <>
          <button type="button" className="btn btn-primary" data-testid="lesson-setup" onClick={() => actThenFocus(setUpStep, RUN_BUTTON)} title="Puts this step's settings into the Train view and opens it with the focus on Start; training starts only when you press Start">
            {isArmed ? 'Set up again on the Train view' : 'Set up on the Train view'}
          </button>
          <span className="muted small">
            Preset <code>{step.setup.preset}</code>
            {step.setup.studioMap && ' on your Studio map'}
            {step.setup.overrides.length > 0 && (
              <>
                {' with '}
                {step.setup.overrides.map(([p, v]) => `${p} = ${Array.isArray(v) ? v.join(',') : String(v)}`).join(', ')}
              </>
            )}
            {hasRun && !isArmed ? '. Setting up discards the current run.' : '.'}
          </span>
        </>
      )}
    </div>
  );
}

function LessonPanel() {
  const lesson = useStore((s) => s.lessons.find((l) => l.id === s.lessonId));
  const stepIdx = useStore((s) => s.lessonStep);
  const progress = useStore((s) => s.lessonProgress);
  const armed = useStore((s) => s.armed);
  const { goStep, resetLesson } = useStore.getState();
  if (!lesson) return <StartPage />;
  const step = lesson.steps[stepIdx];
  const allDone = lesson.steps.every((_, k) => isDone(progress, lesson.id, k));
  const isArmed = armed?.lessonId === lesson.id && armed.step === stepIdx;
  return (
    <article className="lesson panel" data-testid="lesson" data-lesson={lesson.id} data-step={stepIdx + 1}>
      <header className="lesson-head">
        <h1>{lesson.title}</h1>
        <p>{lesson.summary}</p>
      </header>
      <StepTabs lesson={lesson} stepIdx={stepIdx} />
      <section className="lesson-step" aria-label={`Step ${stepIdx + 1}`}>
        <h2>
          Step {stepIdx + 1} of {lesson.steps.length}: {step.title}
        </h2>
        <p className="lesson-text">{step.text}</p>
        <p className="lesson-action">
          <b>Do:</b> {step.action}
        </p>
        <StepSetupRow step={step} isArmed={isArmed} />
        <CheckStatusView lesson={lesson} step={stepIdx} />
        <div className="lesson-nav">
          <button type="button" className="btn" data-testid="lesson-prev" disabled={stepIdx === 0} onClick={() => goStep(stepIdx - 1)}>
            ← Previous
          </button>
          <button type="button" className="btn" data-testid="lesson-next" disabled={stepIdx === lesson.steps.length - 1} onClick={() => goStep(stepIdx + 1)}>
            Next →
          </button>
          <span className="status-spacer" />
          <button type="button" className="btn" data-testid="lesson-reset" onClick={() => resetLesson(lesson.id)} title="Forget this lesson's ticks and go back to its first step">
            Start the lesson over
          </button>
        </div>
      </section>
      {allDone && (
        <section className="lesson-takeaway" data-testid="lesson-takeaway">
          <h2>What to take away</h2>
          <p>{lesson.takeaway}</p>
        </section>
      )}
    </article>
  );
}

export function LessonsView() {
  const classroom = useStore((s) => s.classroom);
  const lessonOpen = useStore((s) => s.lessonId !== null);
  // A classroom link is for students: the builder stays with hosts.
  const student = classroom.hide.length > 0 || classroom.lock.length > 0;
  const list = (
    <aside className="sidebar lessons-sidebar">
      <LessonList />
    </aside>
  );
  const main = (
    <main className="main lessons-main">
      <LessonPanel />
      {!student && <ClassroomLink />}
    </main>
  );
  // The start page comes first in the page's order (and on top on a phone), the list beside it
  // on a wide screen: a newcomer's first Tab and first screen are the first lesson, not ten list items.
  return lessonOpen ? (
    <div className="lessons-layout">
      {list}
      {main}
    </div>
  ) : (
    <div className="lessons-layout lessons-start">
      {main}
      {list}
    </div>
  );
}
