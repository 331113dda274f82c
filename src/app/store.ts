/**
 * The app's main zustand store: the shared slices (state/sharedSlices.ts: notices, backend,
 * env viewer, view) composed with each view's slice (train, runs, lessons, studio). It lives at
 * the app's root, beside App.tsx, so no view folder and state/ import each other both ways.
 * Smaller stores stay with the feature they serve: the reward lab's (rewardLab.ts,
 * recentBatches.ts, rescore.ts) and the sweep's (train/sweep.ts). Components subscribe with
 * narrow selectors.
 */
import { create } from 'zustand';
import { backendSlice, noticeSlice, viewerSlice, viewSlice } from './state/sharedSlices.ts';
import { trainSlice } from './train/slice.ts';
import { runsSlice, saveSelected } from './runs/slice.ts';
import { lessonsSlice } from './lessons/slice.ts';
import { studioSlice } from './studio/studioSlice.ts';
import type { Store } from './storeTypes.ts';


export const useStore = create<Store>()((...a) => ({
  ...noticeSlice(...a),
  ...backendSlice(...a),
  ...viewerSlice(...a),
  ...viewSlice(...a),
  ...trainSlice(...a),
  ...runsSlice(...a),
  ...lessonsSlice(...a),
  ...studioSlice(...a),
}));

useStore.subscribe((s, prev) => {
  if (s.selected !== prev.selected) saveSelected(s.selected);
});
