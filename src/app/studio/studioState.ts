/** The studio slice's state (its creator is studioSlice.ts): which tab shows and the map being drawn (the map tab's whole document). */
import type { GridMap } from '../../core/envs/grid/mapSpec.ts';
import type { StudioTab } from './studioHash.ts';

export interface StudioSlice {
  studioTab: StudioTab;
  /** The map the map tab edits (always a valid map: edits that would break it are refused with a message). */
  studioMap: GridMap;
  setStudioTab(tab: StudioTab): void;
  setStudioMap(map: GridMap): void;
  /** Opens the studio from a `#view=studio&…` link. */
  openStudio(hash: string): void;
}
