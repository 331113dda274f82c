/** The studio slice (its state's type is studioState.ts, which the store's types import without this creator). */
import type { StateCreator } from 'zustand';
import { DEFAULT_MAP } from '../../core/envs/grid/mapSpec.ts';
import type { Store } from '../storeTypes.ts';
import { readCodeLink } from './code/link.ts';
import { parseStudioHash } from './studioHash.ts';
import type { StudioSlice } from './studioState.ts';

export const studioSlice: StateCreator<Store, [], [], StudioSlice> = (set, get) => ({
  studioTab: 'map',
  studioMap: DEFAULT_MAP,
  codeLink: null,
  setStudioTab: (studioTab) => set({ studioTab }),
  settleCodeLink: () => {
    const link = get().codeLink;
    if (link && !link.used) set({ codeLink: { ...link, used: true } });
  },
  setStudioMap: (studioMap) => set({ studioMap }),
  studioVerdict: null,
  setStudioVerdict: (studioVerdict) => set({ studioVerdict }),
  openStudio: (hash, codeFrom = hash) => {
    const p = parseStudioHash(hash);
    for (const problem of p.problems) get().notify('warning', `Ignored part of the link: ${problem}.`);
    const code = readCodeLink(codeFrom);
    // (A studio link's undecodable code= pair was named by the hash parser already.)
    if (code.kind === 'bad' && !p.problems.some((q) => q.includes('"code='))) get().notify('warning', `Ignored the link's code: ${code.message}.`);
    const codeLink = code.kind === 'code' ? { code: code.code, seq: (get().codeLink?.seq ?? 0) + 1, used: false } : get().codeLink;
    set({ view: 'studio', studioTab: p.tab, codeLink, ...(p.map ? { studioMap: p.map } : {}) });
  },
});
