/** The studio slice (its state's type is studioState.ts, which the store's types import without this creator). */
import type { StateCreator } from 'zustand';
import { DEFAULT_MAP } from '../../core/envs/grid/mapSpec.ts';
import type { Store } from '../state/storeTypes.ts';
import { parseStudioHash } from './studioHash.ts';
import type { StudioSlice } from './studioState.ts';

export const studioSlice: StateCreator<Store, [], [], StudioSlice> = (set, get) => ({
  studioTab: 'map',
  studioMap: DEFAULT_MAP,
  setStudioTab: (studioTab) => set({ studioTab }),
  setStudioMap: (studioMap) => set({ studioMap }),
  openStudio: (hash) => {
    const p = parseStudioHash(hash);
    for (const problem of p.problems) get().notify('warning', `Ignored part of the link: ${problem}.`);
    set({ view: 'studio', studioTab: p.tab, ...(p.map ? { studioMap: p.map } : {}) });
  },
});
