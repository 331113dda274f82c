/**
 * The training slice of the app store, put together from its parts: the config form (form.ts),
 * the run state (run.ts; the loop itself runs in the training worker, core's runTraining) and
 * the run's saved record (recording.ts).
 */
import type { StateCreator } from 'zustand';
import type { Store } from '../storeTypes.ts';
import type { TrainSlice } from './trainState.ts';
import { formSlice } from './form.ts';
import { runSlice } from './run.ts';

export { flushRunRecord, forgetRunRecord, recordingRunId } from './recording.ts';

export const trainSlice: StateCreator<Store, [], [], TrainSlice> = (set, get) => {
  const { part, applyLive } = runSlice(set, get);
  return { ...formSlice(set, get, applyLive), ...part };
};
