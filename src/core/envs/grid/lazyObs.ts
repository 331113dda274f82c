/**
 * A grid observation whose text is rendered on first read, not at every step.
 */
import type { GridObs } from '../types.ts';
import { renderView } from './view.ts';

/**
 * Observations render their text on first read (image policies never read it; building it was
 * a fifth of a grid step). `text` is an own, enumerable accessor, so structured clone, JSON and
 * deepClone see it as data; its getter is one shared function (a getter written in an object
 * literal is a new closure per observation and leaves the object in slow dictionary mode:
 * ~0.7 µs an observation, against ~0.2 µs this way). What it renders from is kept under a
 * symbol key, which those copies skip: (view size << 16 | carried type << 8 | carried colour),
 * replaced by the text once rendered.
 */
const TEXT_STATE = Symbol('gridObsText');
type LazyObs = GridObs & { [TEXT_STATE]: number | string };
function lazyText(this: LazyObs): string {
  const s = this[TEXT_STATE];
  if (typeof s === 'string') return s;
  return (this[TEXT_STATE] = renderView(this.image, s >>> 16, { type: (s >>> 8) & 0xff, color: s & 0xff }));
}
const TEXT_PROPERTY: PropertyDescriptor = Object.freeze({ get: lazyText, enumerable: true, configurable: true });

/** A grid observation over `image` (a `size`-cell view; the agent carries `type`/`color`) whose text renders on first read. */
export function lazyGridObs(image: Uint8Array, direction: number, size: number, type: number, color: number): GridObs {
  const obs = { image, direction } as LazyObs;
  Object.defineProperty(obs, 'text', TEXT_PROPERTY);
  obs[TEXT_STATE] = (size << 16) | (type << 8) | color;
  return obs;
}
