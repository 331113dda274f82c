/**
 * Canvas drawing of a grid overlay on top of the map (REINFORCEjs style): each mapped cell tinted
 * by V(s) with the agent standing there facing `dir`, and a glyph for the policy's most likely
 * action there (an arrow for forward, ↺ / ↻ for turns, a word for the rest), its opacity the
 * action's probability. Coordinates are CSS pixels, as gridPaint.ts.
 */
import type { GridOverlay } from '../../runtime/trainWorker/types.ts';
import { argmaxAction, valueColor, valueRange } from './overlay.ts';

const HEADING_ANGLE = [0, Math.PI / 2, Math.PI, -Math.PI / 2];
const SHORT: Record<string, string> = { left: '↺', right: '↻', pickup: 'pick', drop: 'drop', toggle: 'open', done: 'done' };

function arrow(ctx: CanvasRenderingContext2D, cx: number, cy: number, s: number, dir: number): void {
  ctx.save();
  ctx.translate(cx, cy);
  ctx.rotate(HEADING_ANGLE[dir]);
  const L = s * 0.3;
  ctx.beginPath();
  ctx.moveTo(-L, 0);
  ctx.lineTo(L * 0.55, 0);
  ctx.stroke();
  ctx.beginPath();
  ctx.moveTo(L, 0);
  ctx.lineTo(L * 0.35, -L * 0.45);
  ctx.lineTo(L * 0.35, L * 0.45);
  ctx.closePath();
  ctx.fill();
  ctx.restore();
}

/** `agent`: the cell the replayed agent stands on; its glyph is left out so the agent drawn on top stays readable. */
export function paintOverlay(
  ctx: CanvasRenderingContext2D,
  ov: GridOverlay,
  s: number,
  dir: number,
  labels: readonly string[],
  show: { value: boolean; policy: boolean },
  agent?: { x: number; y: number },
): void {
  const range = valueRange(ov, dir);
  const n = ov.cells.length / 2;
  ctx.save();
  for (let c = 0; c < n; c++) {
    const x = ov.cells[2 * c] * s;
    const y = ov.cells[2 * c + 1] * s;
    if (show.value && ov.values) {
      ctx.fillStyle = valueColor(ov.values[c * 4 + dir], range);
      ctx.fillRect(x + 1, y + 1, s - 2, s - 2);
      if (s >= 40) {
        ctx.fillStyle = 'rgba(15, 23, 42, 0.85)';
        ctx.font = `600 ${Math.round(s * 0.2)}px ui-sans-serif, system-ui, sans-serif`;
        ctx.textAlign = 'left';
        ctx.textBaseline = 'top';
        ctx.fillText(ov.values[c * 4 + dir].toFixed(2), x + 3, y + 2);
      }
    }
    if (show.policy && !(agent && agent.x === ov.cells[2 * c] && agent.y === ov.cells[2 * c + 1])) {
      const { action, prob } = argmaxAction(ov, c, dir);
      const label = labels[action] ?? String(action);
      const alpha = 0.3 + 0.7 * prob;
      ctx.fillStyle = ctx.strokeStyle = `rgba(30, 27, 75, ${alpha})`;
      ctx.lineWidth = Math.max(1.5, s * 0.06);
      const cx = x + s / 2;
      const cy = y + s / 2 + (s >= 40 ? s * 0.1 : 0);
      if (label === 'forward') arrow(ctx, cx, cy, s, dir);
      else {
        const g = SHORT[label] ?? label;
        ctx.font = `700 ${Math.round(g.length > 1 ? s * 0.22 : s * 0.42)}px ui-sans-serif, system-ui, sans-serif`;
        ctx.textAlign = 'center';
        ctx.textBaseline = 'middle';
        ctx.fillText(g, cx, cy);
      }
    }
  }
  ctx.restore();
}
