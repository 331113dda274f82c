/**
 * The map canvas: paint with the mouse (click or drag) or the keyboard (arrows move a cursor,
 * Space or Enter places the selected tile, 1–7 pick a tile, R turns the start's heading).
 * Every paint goes through `onPaint`, which refuses an edit that would break the map and says why.
 */
import { useCallback, useRef, useState } from 'react';
import { parseMap } from '../../../core/envs/grid/ascii.ts';
import { DIR_NAMES } from '../../../core/envs/grid/view.ts';
import type { GridFrame } from '../../../core/envs/types.ts';
import { paintGridFrame } from '../../env/gridPaint.ts';
import { PixelCanvas } from '../../ui/PixelCanvas.tsx';
import { useElementSize } from '../../ui/useElementSize.ts';
import { TOOLS, describeCell, type Tool } from './tools.ts';

/** Cell size bounds, CSS px. */
const CELL = { min: 12, max: 56 } as const;

export interface MapEditorProps {
  rows: readonly string[];
  tool: Tool;
  heading: number;
  onPaint(x: number, y: number): void;
  onTool(tool: Tool): void;
  onTurn(): void;
}

function frameOf(rows: readonly string[]): GridFrame {
  const { grid, agent } = parseMap(rows);
  return { kind: 'grid', width: grid.width, height: grid.height, cells: grid.cells, agent: { ...agent, carrying: null }, visible: [], mission: '' };
}

interface Cell {
  x: number;
  y: number;
}

/** The canvas's keys: arrows move the cursor (clamped to the W × H map), Space or Enter paints at it, R turns the start, 1–7 pick a tile. */
function mapKeyHandler(W: number, H: number, cursor: Cell, { setCursor, onPaint, onTurn, onTool }: { setCursor(c: Cell): void } & Pick<MapEditorProps, 'onPaint' | 'onTurn' | 'onTool'>) {
  return (e: React.KeyboardEvent) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const moves: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const m = moves[e.key];
    if (m) {
      e.preventDefault();
      setCursor({ x: Math.max(0, Math.min(W - 1, cursor.x + m[0])), y: Math.max(0, Math.min(H - 1, cursor.y + m[1])) });
      return;
    }
    if (e.key === ' ' || e.key === 'Enter') {
      e.preventDefault();
      onPaint(cursor.x, cursor.y);
      return;
    }
    if (e.key === 'r' || e.key === 'R') {
      e.preventDefault();
      onTurn();
      return;
    }
    const t = TOOLS.find((tt) => tt.key === e.key);
    if (t) {
      e.preventDefault();
      onTool(t.id);
    }
  };
}

/** Mouse painting: a press paints the cell under it, a drag paints each new cell it enters once (cell: CSS px per cell). */
function usePointerPaint(W: number, H: number, cell: number, setCursor: (c: Cell) => void, onPaint: (x: number, y: number) => void) {
  const last = useRef<string | null>(null);
  const cellAt = (e: React.PointerEvent): Cell | null => {
    const r = (e.currentTarget as HTMLElement).getBoundingClientRect();
    const x = Math.floor((e.clientX - r.left) / cell);
    const y = Math.floor((e.clientY - r.top) / cell);
    return x >= 0 && y >= 0 && x < W && y < H ? { x, y } : null;
  };
  const paintAt = (p: Cell | null) => {
    if (!p) return;
    const k = `${p.x},${p.y}`;
    if (last.current === k) return;
    last.current = k;
    setCursor(p);
    onPaint(p.x, p.y);
  };
  return {
    onPointerDown: (e: React.PointerEvent) => {
      (e.currentTarget as HTMLElement).setPointerCapture?.(e.pointerId);
      last.current = null;
      paintAt(cellAt(e));
    },
    onPointerMove: (e: React.PointerEvent) => {
      if (e.buttons & 1) paintAt(cellAt(e));
    },
    onPointerUp: () => {
      last.current = null;
    },
  };
}

export function MapEditor({ rows, tool, heading, onPaint, onTool, onTurn }: MapEditorProps) {
  const box = useRef<HTMLDivElement>(null);
  const { width } = useElementSize(box);
  const W = rows[0].length;
  const H = rows.length;
  const cell = Math.max(CELL.min, Math.min(CELL.max, Math.floor((width || 320) / W)));
  const [cursor, setCursor] = useState<Cell>({ x: 1, y: 1 });
  const [focused, setFocused] = useState(false);
  const cx = Math.min(cursor.x, W - 1);
  const cy = Math.min(cursor.y, H - 1);
  const pointer = usePointerPaint(W, H, cell, setCursor, onPaint);

  const paint = useCallback(
    (ctx: CanvasRenderingContext2D) => {
      paintGridFrame(ctx, frameOf(rows), cell, false);
      if (focused) {
        ctx.strokeStyle = '#f59e0b';
        ctx.lineWidth = 3;
        ctx.strokeRect(cx * cell + 1.5, cy * cell + 1.5, cell - 3, cell - 3);
      }
    },
    [rows, cell, cx, cy, focused],
  );

  const toolTitle = TOOLS.find((t) => t.id === tool)?.title ?? tool;
  return (
    <div className="map-editor-box" ref={box}>
      <div
        className="map-editor"
        role="application"
        aria-roledescription="map editor"
        aria-label={`Map, ${W} by ${H}. Arrow keys move the cursor, Space paints ${toolTitle}, keys 1 to ${TOOLS.length} pick a tile, R turns the start.`}
        aria-describedby="map-cursor"
        tabIndex={0}
        data-testid="map-editor"
        style={{ width: W * cell, height: H * cell }}
        onFocus={() => setFocused(true)}
        onBlur={() => setFocused(false)}
        onKeyDown={mapKeyHandler(W, H, { x: cx, y: cy }, { setCursor, onPaint, onTurn, onTool })}
        {...pointer}
      >
        <PixelCanvas className="map-editor-canvas" testId="map-editor-canvas" width={W * cell} height={H * cell} paint={paint} label={`The map being drawn, ${W} by ${H} cells.`} />
      </div>
      <p id="map-cursor" className="muted small" aria-live="polite" data-testid="map-cursor">
        Cursor column {cx + 1}, row {cy + 1}: {describeCell(rows[cy][cx])} · painting {toolTitle}
        {tool === 'agent' ? `, facing ${DIR_NAMES[heading]}` : ''}
      </p>
    </div>
  );
}
