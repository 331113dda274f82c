/** The content-box size of an element in CSS px, updated on resize. */
import { useLayoutEffect, useState, type RefObject } from 'react';

type Size = { width: number; height: number };

function contentSize(el: HTMLElement): Size {
  const cs = getComputedStyle(el);
  const padX = parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight);
  const padY = parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom);
  return { width: Math.floor(el.clientWidth - padX), height: Math.floor(el.clientHeight - padY) };
}

export function useElementSize(ref: RefObject<HTMLElement | null>): Size {
  const [size, setSize] = useState<Size>({ width: 0, height: 0 });
  // Layout effect: the first measurement lands before the browser paints, so whatever depends
  // on the size (the map canvas) never flashes empty; the observer follows later resizes.
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = (next: Size) => setSize((s) => (s.width === next.width && s.height === next.height ? s : next));
    update(contentSize(el));
    const ro = new ResizeObserver(([entry]) => {
      update({ width: Math.floor(entry.contentRect.width), height: Math.floor(entry.contentRect.height) });
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, [ref]);
  return size;
}
