/** Marks the armed lesson step done as soon as the live metrics (or the Studio's map) satisfy its check. */
import { useStore } from '../store.ts';

/** Quiet time after the last map edit before a map check runs (it plays 100 random episodes), ms. */
const MAP_CHECK_DELAY_MS = 200;

export function startLessonSync(): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const unsubscribe = useStore.subscribe((s, prev) => {
    if (s.history !== prev.history || s.armed !== prev.armed) s.checkArmed();
    if (s.armed && (s.studioMap !== prev.studioMap || s.studioVerdict !== prev.studioVerdict || s.armed !== prev.armed)) {
      clearTimeout(timer);
      timer = setTimeout(() => useStore.getState().checkArmedMap(), MAP_CHECK_DELAY_MS);
    }
  });
  return () => {
    clearTimeout(timer);
    unsubscribe();
  };
}
