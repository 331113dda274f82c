/** The studio slice's state (its creator is studioSlice.ts): which tab shows and the map being drawn (the map tab's whole document). */
import type { GridMap } from '../../core/envs/grid/mapSpec.ts';
import type { MapVerdict } from '../../core/envs/grid/mapSolve.ts';
import type { StudioTab } from './studioHash.ts';

export interface StudioSlice {
  studioTab: StudioTab;
  /** The map the map tab edits (always a valid map: edits that would break it are refused with a message). */
  studioMap: GridMap;
  /**
   * Code that arrived by a link (a Code-tab or a Train link carrying a code env), read as the
   * link is applied, at page open or when a link is pasted into an open tab. `seq` counts the
   * links so each one opens the Code tab afresh; `used` once the person ran or set it aside.
   */
  codeLink: { code: string; seq: number; used: boolean } | null;
  setStudioTab(tab: StudioTab): void;
  /** The person ran the link's code or kept their own: the Code tab no longer offers it. */
  settleCodeLink(): void;
  setStudioMap(map: GridMap): void;
  /**
   * The verdict the map tab shows ("Solvable in 19 steps"), for the map it checked; null while it
   * shows "Checking…". A lesson's map check waits for it, so the lesson never says "done" first.
   */
  studioVerdict: { map: GridMap; verdict: MapVerdict } | null;
  setStudioVerdict(v: { map: GridMap; verdict: MapVerdict } | null): void;
  /**
   * Opens the studio from a `#view=studio&…` link; `codeFrom` is the link the code is read from
   * when that is another (a Train link on a code env opens the Code tab).
   */
  openStudio(hash: string, codeFrom?: string): void;
}
