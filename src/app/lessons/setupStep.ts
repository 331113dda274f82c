/**
 * The armed lesson step whose setup is on the Train form for `presetId`, if any: the Train view
 * shows its title and text in place of the preset's blurb. A Studio map step has no Train setup.
 */
import type { Store } from '../storeTypes.ts';
import { isMapCheck } from './schema.ts';

export function armedSetupStep(s: Store, presetId: string): { title: string; text: string } | undefined {
  const st = s.armed && s.lessons.find((l) => l.id === s.armed?.lessonId)?.steps[s.armed.step];
  return st && !isMapCheck(st.check) && st.setup.preset === presetId ? st : undefined;
}
