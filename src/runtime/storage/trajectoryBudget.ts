/**
 * How a recording run keeps its saved trajectories under `maxTrajectories`: once what is saved and
 * what comes would pass it, only iterations that are multiples of a stride are kept, the stride
 * doubling (which roughly halves what is saved) until the estimate fits.
 */

/**
 * The stride to keep from now on, at least `stride`: unchanged while `saved + incoming` fits `max`,
 * else doubled until the saved lines thinned to it (about `saved / (new / old)`) plus the incoming
 * lines on its iterations fit.
 */
export function strideToFit(incomingIterations: readonly number[], saved: number, stride: number, max: number): number {
  if (saved + incomingIterations.length <= max) return stride;
  let next = stride;
  while (next < 2 ** 30) {
    next *= 2;
    const kept = incomingIterations.filter((it) => it % next === 0).length;
    const estimate = Math.ceil(saved / (next / stride));
    if (estimate + kept <= max) break;
  }
  return next;
}
