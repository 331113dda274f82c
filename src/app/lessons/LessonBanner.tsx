/** On the Train view while a lesson step is set up: the step, what to do, and its live check. */
import { useStore } from '../store.ts';
import { CheckStatusView } from './CheckStatusView.tsx';
import { actThenFocus, LESSON_ACTION, SHORTCUTS } from '../shell/shortcuts.ts';

export function LessonBanner() {
  const armed = useStore((s) => s.armed);
  const lesson = useStore((s) => s.lessons.find((l) => l.id === s.armed?.lessonId));
  const openLesson = useStore((s) => s.openLesson);
  if (!armed || !lesson) return null;
  const step = lesson.steps[armed.step];
  return (
    <div className="lesson-banner panel" data-testid="lesson-banner">
      <div className="lesson-banner-text">
        <span className="muted">
          Lesson · {lesson.title} · step {armed.step + 1} of {lesson.steps.length}
        </span>
        <b>{step.title}.</b> <span>{step.action}</span>
      </div>
      <CheckStatusView lesson={lesson} step={armed.step} compact />
      <button type="button" className="btn" data-testid="lesson-back" aria-keyshortcuts={SHORTCUTS.lesson.keys} title={`${SHORTCUTS.lesson.keys} from anywhere`} onClick={() => actThenFocus(() => openLesson(lesson.id, armed.step), LESSON_ACTION)}>
        Back to the lesson
      </button>
    </div>
  );
}
