/** The studio slice: which tab shows and the map being drawn (the map tab's whole document). */
import type { StateCreator } from 'zustand';
import { DEFAULT_MAP, type GridMap } from '../../core/envs/grid/mapSpec.ts';
import type { Store } from '../state/storeTypes.ts';
import { parseStudioHash, type StudioTab } from './studioHash.ts';

export interface StudioSlice {
  studioTab: StudioTab;
  /** The map the map tab edits (always a valid map: edits that would break it are refused with a message). */
  studioMap: GridMap;
  setStudioTab(tab: StudioTab): void;
  setStudioMap(map: GridMap): void;
  /** Opens the studio from a `#view=studio&…` link. */
  openStudio(hash: string): void;
}

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
