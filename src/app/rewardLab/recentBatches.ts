/**
 * The run's recent batches (grid or token), kept for the reward lab's re-scoring (freeze): the training
 * slice hands over every iteration it ingests, not only the ones React draws (iterations are
 * drawn at most once per frame). A module of its own, without the app store, so the slice can
 * import it without a cycle.
 */
import { create } from 'zustand';
import type { EpisodeView, GridEpisodeView, IterationView, TokenEpisodeView } from '../../runtime/trainWorker/types.ts';

/** Batches (iterations) kept: the newest ones reported. */
export const RECENT_BATCHES = 8;

/** A batch the trainer reported, all of one kind: grid episodes replay, token episodes carry their turns. */
export type KeptBatch = Omit<IterationView, 'episodes'> & ({ kind: 'grid'; episodes: GridEpisodeView[] } | { kind: 'tokens'; episodes: TokenEpisodeView[] });

let recent: KeptBatch[] = [];

/** What can be frozen: batches kept, their episodes, first and last iteration (0-based); null when none. */
export const useRecentBatches = create<{ available: { batches: number; episodes: number; first: number; last: number } | null }>(() => ({ available: null }));

function publish(): void {
  const n = recent.length;
  useRecentBatches.setState({ available: n === 0 ? null : { batches: n, episodes: recent.reduce((s, b) => s + b.episodes.length, 0), first: recent[0].iteration, last: recent[n - 1].iteration } });
}

/** Keeps an ingested iteration's batch. A batch whose iteration is not past the last one kept starts a new run's list. */
export function noteBatch(v: IterationView): void {
  const kind = v.episodes[0]?.kind;
  if (!kind || v.episodes.some((e: EpisodeView) => e.kind !== kind)) return;
  if (recent.length > 0 && (v.iteration <= recent[recent.length - 1].iteration || recent[0].kind !== kind)) recent = [];
  recent.push({ ...v, kind } as KeptBatch);
  if (recent.length > RECENT_BATCHES) recent = recent.slice(-RECENT_BATCHES);
  publish();
}

/** Forgets the kept batches (a new run starts or the run is reset). */
export function clearRecentBatches(): void {
  recent = [];
  publish();
}

/** The kept batches, oldest first. */
export function recentBatches(): readonly KeptBatch[] {
  return recent;
}
