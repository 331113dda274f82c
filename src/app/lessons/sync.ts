/** Marks the armed lesson step done as soon as the live metrics satisfy its check. */
import { useStore } from '../state/store.ts';

export function startLessonSync(): () => void {
  return useStore.subscribe((s, prev) => {
    if (s.history !== prev.history || s.armed !== prev.armed) s.checkArmed();
  });
}
