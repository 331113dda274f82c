/**
 * The form of a collect's result on its way from a rollout worker to the main thread (kept
 * apart from workerApi.ts so the main thread imports no env or rollout code with it).
 */
import type { Info } from '../../core/envs/types.ts';
import type { CollectResult } from '../../core/rollout/stepPool.ts';
import type { StepEpisode } from '../../core/rollout/stepEpisode.ts';

/** An episode as it crosses from a worker: `infos` sparse (see packInfos). */
export type WireEpisode = Omit<StepEpisode, 'infos'> & { infos: [number, Info][] };
export type WireResult = Omit<CollectResult, 'episodes'> & { episodes: WireEpisode[] };

/**
 * Most step infos are empty (a grid world reports `{ success }` on the last step only), and
 * structured clone pays per object on both sides: ~0.3 µs a step, for one object per step.
 * So only the non-empty ones cross, with their step index; the main thread recreates the
 * empty ones.
 */
export function packInfos(ep: StepEpisode): WireEpisode {
  const infos: [number, Info][] = [];
  ep.infos.forEach((info, t) => {
    for (const _ in info) return void infos.push([t, info]);
  });
  return { ...ep, infos };
}

/** The info of every step that reported nothing: one shared, frozen object (nobody writes infos). */
const EMPTY_INFO: Info = Object.freeze({});

/** Inverse of packInfos: one info per step again (the empty ones shared). */
export function unpackInfos(ep: WireEpisode): StepEpisode {
  const infos: Info[] = new Array<Info>(ep.actions.length).fill(EMPTY_INFO);
  for (const [t, info] of ep.infos) infos[t] = info;
  return { ...ep, infos };
}
