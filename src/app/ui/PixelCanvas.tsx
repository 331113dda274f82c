/**
 * A canvas sized in CSS pixels whose backing store follows devicePixelRatio, so drawings stay
 * sharp on any screen and on browser zoom. `paint` receives a context already scaled to CSS px.
 */
import { useEffect, useRef, useSyncExternalStore } from 'react';

function subscribeDpr(onChange: () => void): () => void {
  // A resolution media query fires when the ratio changes (zoom, moving to another screen).
  const mq = window.matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
  mq.addEventListener('change', onChange);
  return () => mq.removeEventListener('change', onChange);
}

export function useDevicePixelRatio(): number {
  return useSyncExternalStore(
    subscribeDpr,
    () => window.devicePixelRatio || 1,
    () => 1,
  );
}

export interface PixelCanvasProps {
  /** CSS width in px. */
  width: number;
  /** CSS height in px. */
  height: number;
  paint: (ctx: CanvasRenderingContext2D) => void;
  label: string;
  className?: string;
  testId?: string;
}

export function PixelCanvas({ width, height, paint, label, className, testId }: PixelCanvasProps) {
  const ref = useRef<HTMLCanvasElement>(null);
  const dpr = useDevicePixelRatio();
  useEffect(() => {
    const canvas = ref.current;
    const ctx = canvas?.getContext('2d');
    if (!canvas || !ctx) return;
    const w = Math.max(1, Math.round(width * dpr));
    const h = Math.max(1, Math.round(height * dpr));
    if (canvas.width !== w) canvas.width = w;
    if (canvas.height !== h) canvas.height = h;
    ctx.setTransform(w / width, 0, 0, h / height, 0, 0);
    paint(ctx);
  }, [width, height, dpr, paint]);
  return (
    <canvas
      ref={ref}
      className={className}
      style={{ width: `${width}px`, height: `${height}px` }}
      role="img"
      aria-label={label}
      data-testid={testId}
    />
  );
}
