/** The Lessons slice's state and actions, apart from their implementation (slice.ts), so the store's type imports no slice. */
import { type Classroom } from '../train/classroom.ts';
import { type Progress } from './progress.ts';
import type { Lesson } from './schema.ts';

export interface LessonsSlice {
  lessons: Lesson[];
  lessonProgress: Progress;
  /** The lesson and step the Lessons view shows. */
  lessonId: string | null;
  lessonStep: number;
  /** The step whose setup is in the Train view's form (set up in this page); its check watches the run. */
  armed: { lessonId: string; step: number } | null;
  classroom: Classroom;
  /** Shows a lesson (at `step`, else where the student left it, else its first step not done). */
  openLesson(id: string | null, step?: number | null): void;
  goStep(step: number): void;
  /** Applies the open step's setup to the Train view and switches to it (does not start training). */
  setUpStep(): void;
  /** Re-reads the live metrics: marks the armed step done once its check holds. */
  checkArmed(): void;
  /** Re-reads the Studio's map: marks the armed step done once its map check holds. */
  checkArmedMap(): void;
  resetLesson(id: string): void;
  setClassroom(c: Classroom): void;
}
