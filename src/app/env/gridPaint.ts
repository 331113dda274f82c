/**
 * Canvas drawing of grid worlds: the full map (GridFrame) and the agent's egocentric view
 * (GridObs.image). Coordinates are CSS pixels; the caller scales the context by
 * devicePixelRatio, so shapes stay crisp on any screen.
 *
 * Cell encoding (type, colour, state) and ids come from core/envs/grid/objects.ts.
 */
import { COLOR_NAMES, DOOR, OBJ } from '../../core/envs/grid/objects.ts';
import type { GridFrame } from '../../core/envs/types.ts';

/** Object colours by colour id; saturated enough to read on the light floor. */
export const OBJECT_COLORS: Record<(typeof COLOR_NAMES)[number], string> = {
  red: '#e5484d',
  green: '#2f9e61',
  blue: '#3e63dd',
  purple: '#8e4ec6',
  yellow: '#e0a100',
  grey: '#8b8d98',
};

const C = {
  floor: '#f8f9fb',
  // Translucent, so lines read on the light floor without glaring over walls and unseen cells.
  gridLine: 'rgba(100, 110, 130, 0.26)',
  wall: '#474e5c',
  wallEdge: '#5b6372',
  unseen: '#161a22',
  unseenHatch: '#262c38',
  lava: '#f76b15',
  lavaWave: '#ffd3b3',
  goal: '#30a46c',
  goalInner: '#3dbb7c',
  agent: '#e5484d',
  agentEdge: '#9f1d22',
  viewTint: 'rgba(59, 130, 246, 0.16)',
  viewEdge: '#2563eb',
  hidden: 'rgba(15, 23, 42, 0.07)',
} as const;

export function colorOf(id: number): string {
  return OBJECT_COLORS[COLOR_NAMES[id] ?? 'grey'] ?? OBJECT_COLORS.grey;
}

/** Heading ids: 0 east, 1 south, 2 west, 3 north (GridObs.direction). Radians, canvas y-down. */
const HEADING_ANGLE = [0, Math.PI / 2, Math.PI, -Math.PI / 2];

function roundRect(ctx: CanvasRenderingContext2D, x: number, y: number, w: number, h: number, r: number): void {
  ctx.beginPath();
  ctx.roundRect(x, y, w, h, r);
}

/** One encoded cell at (x, y) of side s, background included. */
export function paintCell(ctx: CanvasRenderingContext2D, x: number, y: number, s: number, type: number, color: number, state: number): void {
  if (type === OBJ.unseen) {
    // Near-black with a faint hatch, so "unknown" never reads as a wall.
    ctx.fillStyle = C.unseen;
    ctx.fillRect(x, y, s, s);
    ctx.save();
    ctx.beginPath();
    ctx.rect(x, y, s, s);
    ctx.clip();
    ctx.strokeStyle = C.unseenHatch;
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let k = -s; k < s; k += s / 4) {
      ctx.moveTo(x + k, y + s);
      ctx.lineTo(x + k + s, y);
    }
    ctx.stroke();
    ctx.restore();
    return;
  }
  if (type === OBJ.wall) {
    ctx.fillStyle = C.wall;
    ctx.fillRect(x, y, s, s);
    // A faint top/left bevel makes walls read as raised blocks rather than holes.
    ctx.fillStyle = C.wallEdge;
    ctx.fillRect(x, y, s, Math.max(1, s * 0.06));
    ctx.fillRect(x, y, Math.max(1, s * 0.06), s);
    return;
  }
  ctx.fillStyle = C.floor;
  ctx.fillRect(x, y, s, s);
  if (type === OBJ.floor) {
    // A coloured floor tile (grid/switch-door's switch plate): a round pressure plate, so it does not read as a door.
    ctx.fillStyle = colorOf(color) + '33';
    ctx.fillRect(x + 1, y + 1, s - 2, s - 2);
    ctx.fillStyle = colorOf(color) + '99';
    ctx.strokeStyle = colorOf(color);
    ctx.lineWidth = Math.max(1, s * 0.06);
    ctx.beginPath();
    ctx.arc(x + s / 2, y + s / 2, s * 0.36, 0, Math.PI * 2);
    ctx.fill();
    ctx.stroke();
  }
  paintObject(ctx, x, y, s, type, color, state);
}

/** One object's picture in the cell at (x, y) of side s, in its colour `col` (door: its `state`). */
type ObjectPainter = (ctx: CanvasRenderingContext2D, x: number, y: number, s: number, col: string, state: number) => void;

const paintGoal: ObjectPainter = (ctx, x, y, s) => {
  ctx.fillStyle = C.goal;
  roundRect(ctx, x + s * 0.06, y + s * 0.06, s * 0.88, s * 0.88, s * 0.08);
  ctx.fill();
  ctx.fillStyle = C.goalInner;
  roundRect(ctx, x + s * 0.22, y + s * 0.22, s * 0.56, s * 0.56, s * 0.06);
  ctx.fill();
};

const paintLava: ObjectPainter = (ctx, x, y, s) => {
  ctx.fillStyle = C.lava;
  ctx.fillRect(x, y, s, s);
  ctx.strokeStyle = C.lavaWave;
  ctx.lineWidth = Math.max(1, s * 0.05);
  for (const fy of [0.3, 0.55, 0.8]) {
    ctx.beginPath();
    for (let i = 0; i <= 4; i++) {
      const px = x + s * (0.12 + 0.19 * i);
      const py = y + s * fy + (i % 2 === 0 ? -s * 0.05 : s * 0.05);
      if (i === 0) ctx.moveTo(px, py);
      else ctx.lineTo(px, py);
    }
    ctx.stroke();
  }
};

const paintDoor: ObjectPainter = (ctx, x, y, s, col, state) => {
  const cx = x + s / 2;
  const cy = y + s / 2;
  const inset = s * 0.06;
  ctx.lineWidth = Math.max(1.5, s * 0.07);
  ctx.strokeStyle = col;
  if (state === DOOR.open) {
    // An open door is a frame you can walk through: outline only, dashed to read as "passage".
    ctx.setLineDash([s * 0.12, s * 0.08]);
    ctx.strokeRect(x + inset, y + inset, s - 2 * inset, s - 2 * inset);
    ctx.setLineDash([]);
    return;
  }
  ctx.fillStyle = state === DOOR.locked ? col : col + '55';
  ctx.fillRect(x + inset, y + inset, s - 2 * inset, s - 2 * inset);
  ctx.strokeRect(x + inset, y + inset, s - 2 * inset, s - 2 * inset);
  if (state === DOOR.locked) {
    // Keyhole.
    ctx.fillStyle = '#ffffff';
    ctx.beginPath();
    ctx.arc(cx, cy - s * 0.06, s * 0.09, 0, Math.PI * 2);
    ctx.fill();
    ctx.beginPath();
    ctx.moveTo(cx - s * 0.06, cy + s * 0.2);
    ctx.lineTo(cx + s * 0.06, cy + s * 0.2);
    ctx.lineTo(cx, cy - s * 0.04);
    ctx.closePath();
    ctx.fill();
  } else {
    // Handle.
    ctx.fillStyle = col;
    ctx.beginPath();
    ctx.arc(x + s * 0.72, cy, s * 0.07, 0, Math.PI * 2);
    ctx.fill();
  }
};

const paintKey: ObjectPainter = (ctx, x, y, s, col) => {
  const cx = x + s / 2;
  ctx.strokeStyle = col;
  ctx.fillStyle = col;
  ctx.lineWidth = Math.max(1.5, s * 0.09);
  // Ring.
  ctx.beginPath();
  ctx.arc(cx, y + s * 0.32, s * 0.14, 0, Math.PI * 2);
  ctx.stroke();
  // Shaft and teeth.
  ctx.beginPath();
  ctx.moveTo(cx, y + s * 0.46);
  ctx.lineTo(cx, y + s * 0.84);
  ctx.moveTo(cx, y + s * 0.66);
  ctx.lineTo(cx + s * 0.14, y + s * 0.66);
  ctx.moveTo(cx, y + s * 0.8);
  ctx.lineTo(cx + s * 0.12, y + s * 0.8);
  ctx.stroke();
};

/** Another agent in an egocentric view (multi-agent envs): its heading is not observed, so a disc in its colour. */
const paintOtherAgent: ObjectPainter = (ctx, x, y, s, col) => {
  const cx = x + s / 2;
  const cy = y + s / 2;
  ctx.fillStyle = col;
  ctx.beginPath();
  ctx.arc(cx, cy, s * 0.32, 0, Math.PI * 2);
  ctx.fill();
  ctx.strokeStyle = '#1e293b';
  ctx.lineWidth = Math.max(1, s * 0.05);
  ctx.stroke();
  ctx.fillStyle = '#ffffff';
  ctx.beginPath();
  ctx.arc(cx, cy, s * 0.1, 0, Math.PI * 2);
  ctx.fill();
};

const paintBall: ObjectPainter = (ctx, x, y, s, col) => {
  const cx = x + s / 2;
  const cy = y + s / 2;
  ctx.fillStyle = col;
  ctx.beginPath();
  ctx.arc(cx, cy, s * 0.3, 0, Math.PI * 2);
  ctx.fill();
  ctx.fillStyle = 'rgba(255,255,255,0.35)';
  ctx.beginPath();
  ctx.arc(cx - s * 0.09, cy - s * 0.1, s * 0.09, 0, Math.PI * 2);
  ctx.fill();
};

const paintBox: ObjectPainter = (ctx, x, y, s, col) => {
  ctx.strokeStyle = col;
  ctx.fillStyle = col + '33';
  ctx.lineWidth = Math.max(1.5, s * 0.08);
  roundRect(ctx, x + s * 0.2, y + s * 0.24, s * 0.6, s * 0.56, s * 0.05);
  ctx.fill();
  ctx.stroke();
  ctx.beginPath();
  ctx.moveTo(x + s * 0.2, y + s * 0.42);
  ctx.lineTo(x + s * 0.8, y + s * 0.42);
  ctx.stroke();
};

/** The painter of each object type that has a picture; other types (empty, wall, unseen) paint nothing here. */
function painterOf(type: number): ObjectPainter | null {
  switch (type) {
    case OBJ.goal:
      return paintGoal;
    case OBJ.lava:
      return paintLava;
    case OBJ.door:
      return paintDoor;
    case OBJ.key:
      return paintKey;
    case OBJ.agent:
      return paintOtherAgent;
    case OBJ.ball:
      return paintBall;
    case OBJ.box:
      return paintBox;
    default:
      return null;
  }
}

/** The object on a cell (not its floor). Also used, scaled down, for a carried item. */
export function paintObject(ctx: CanvasRenderingContext2D, x: number, y: number, s: number, type: number, color: number, state: number): void {
  const col = colorOf(color);
  ctx.lineJoin = 'round';
  ctx.lineCap = 'round';
  painterOf(type)?.(ctx, x, y, s, col, state);
}

/** The agent: a triangle pointing along `dir`, with the carried item as a badge. */
export function paintAgent(
  ctx: CanvasRenderingContext2D,
  x: number,
  y: number,
  s: number,
  dir: number,
  carrying: { type: number; color: number } | null,
  /** Multi-agent envs: this agent's colour id, its name (a letter on it) and whether it acts next (a ring). */
  who?: { color: number; name: string; acting: boolean },
): void {
  const cx = x + s / 2;
  const cy = y + s / 2;
  if (who?.acting) {
    ctx.strokeStyle = '#f59e0b';
    ctx.lineWidth = Math.max(2, s * 0.08);
    ctx.beginPath();
    ctx.arc(cx, cy, s * 0.44, 0, Math.PI * 2);
    ctx.stroke();
  }
  ctx.save();
  ctx.translate(cx, cy);
  ctx.rotate(HEADING_ANGLE[dir] ?? 0);
  ctx.beginPath();
  ctx.moveTo(s * 0.34, 0);
  ctx.lineTo(-s * 0.26, -s * 0.26);
  ctx.lineTo(-s * 0.14, 0);
  ctx.lineTo(-s * 0.26, s * 0.26);
  ctx.closePath();
  ctx.fillStyle = who ? colorOf(who.color) : C.agent;
  ctx.fill();
  ctx.lineWidth = Math.max(1, s * 0.04);
  ctx.strokeStyle = who ? '#1e293b' : C.agentEdge;
  ctx.lineJoin = 'round';
  ctx.stroke();
  ctx.restore();
  if (who) {
    ctx.fillStyle = '#1e293b';
    ctx.font = `bold ${Math.round(s * 0.3)}px system-ui, sans-serif`;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    ctx.fillText(who.name.toUpperCase(), x + s * 0.06, y + s * 0.04);
  }
  if (carrying) {
    const b = s * 0.46;
    const bx = x + s - b - s * 0.02;
    const by = y + s - b - s * 0.02;
    ctx.fillStyle = '#ffffff';
    ctx.strokeStyle = '#1e293b';
    ctx.lineWidth = Math.max(1, s * 0.03);
    roundRect(ctx, bx, by, b, b, b * 0.2);
    ctx.fill();
    ctx.stroke();
    paintObject(ctx, bx, by, b, carrying.type, carrying.color, 0);
  }
}

function gridLines(ctx: CanvasRenderingContext2D, w: number, h: number, s: number): void {
  ctx.strokeStyle = C.gridLine;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let i = 1; i < w; i++) {
    ctx.moveTo(i * s, 0);
    ctx.lineTo(i * s, h * s);
  }
  for (let j = 1; j < h; j++) {
    ctx.moveTo(0, j * s);
    ctx.lineTo(w * s, j * s);
  }
  ctx.stroke();
}

/** The full map with the agent's visible cells tinted and outlined. `s` is the cell size. */
export function paintGridFrame(ctx: CanvasRenderingContext2D, f: GridFrame, s: number, showView = true): void {
  ctx.clearRect(0, 0, f.width * s, f.height * s);
  for (let y = 0; y < f.height; y++) {
    for (let x = 0; x < f.width; x++) {
      const o = (y * f.width + x) * 3;
      paintCell(ctx, x * s, y * s, s, f.cells[o], f.cells[o + 1], f.cells[o + 2]);
    }
  }
  gridLines(ctx, f.width, f.height, s);
  if (showView) {
    const seen = new Set(f.visible.map(([x, y]) => y * f.width + x));
    // Dim what the agent cannot see, tint what it can, and outline the boundary.
    ctx.fillStyle = C.hidden;
    for (let i = 0; i < f.width * f.height; i++) if (!seen.has(i)) ctx.fillRect((i % f.width) * s, Math.floor(i / f.width) * s, s, s);
    ctx.fillStyle = C.viewTint;
    for (const [x, y] of f.visible) ctx.fillRect(x * s, y * s, s, s);
    ctx.strokeStyle = C.viewEdge;
    ctx.lineWidth = Math.max(1.5, s * 0.05);
    ctx.lineCap = 'round';
    ctx.beginPath();
    const inView = (x: number, y: number) => x >= 0 && y >= 0 && x < f.width && y < f.height && seen.has(y * f.width + x);
    const edge = (x0: number, y0: number, x1: number, y1: number) => {
      ctx.moveTo(x0 * s, y0 * s);
      ctx.lineTo(x1 * s, y1 * s);
    };
    for (const [x, y] of f.visible) {
      if (!inView(x, y - 1)) edge(x, y, x + 1, y);
      if (!inView(x, y + 1)) edge(x, y + 1, x + 1, y + 1);
      if (!inView(x - 1, y)) edge(x, y, x, y + 1);
      if (!inView(x + 1, y)) edge(x + 1, y, x + 1, y + 1);
    }
    ctx.stroke();
  }
  if (f.agents) {
    for (const a of f.agents) paintAgent(ctx, a.x * s, a.y * s, s, a.dir, null, { color: a.color, name: a.name, acting: a.acting });
  } else paintAgent(ctx, f.agent.x * s, f.agent.y * s, s, f.agent.dir, f.agent.carrying);
}

/** Side length of a square egocentric image of `bytes` bytes (3 per cell), or 0 if not square. */
export function egoViewSize(bytes: number): number {
  const v = Math.round(Math.sqrt(bytes / 3));
  return v * v * 3 === bytes ? v : 0;
}

/**
 * The agent's egocentric observation: v×v cells, the agent at the bottom centre facing up.
 * Unseen cells are dark. The agent's cell encodes what it carries (grid/view.ts): shown as a badge.
 */
export function paintEgoView(ctx: CanvasRenderingContext2D, image: Uint8Array, s: number): void {
  const v = egoViewSize(image.length);
  const ax = Math.floor(v / 2);
  const ay = v - 1;
  ctx.clearRect(0, 0, v * s, v * s);
  for (let y = 0; y < v; y++) {
    for (let x = 0; x < v; x++) {
      const o = (y * v + x) * 3;
      // The agent's own cell encodes what it carries (or empty): drawn as the agent's badge.
      if (x === ax && y === ay) paintCell(ctx, x * s, y * s, s, OBJ.empty, 0, 0);
      else paintCell(ctx, x * s, y * s, s, image[o], image[o + 1], image[o + 2]);
    }
  }
  ctx.strokeStyle = C.gridLine;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let i = 1; i < v; i++) {
    ctx.moveTo(i * s, 0);
    ctx.lineTo(i * s, v * s);
    ctx.moveTo(0, i * s);
    ctx.lineTo(v * s, i * s);
  }
  ctx.stroke();
  const o = (ay * v + ax) * 3;
  const held = image[o] === OBJ.key || image[o] === OBJ.ball || image[o] === OBJ.box ? { type: image[o], color: image[o + 1] } : null;
  // Multi-agent envs mark the acting agent's own cell as an agent in its colour: draw it in that colour.
  if (image[o] === OBJ.agent) paintAgent(ctx, ax * s, ay * s, s, 3, null, { color: image[o + 1], name: '', acting: false });
  else paintAgent(ctx, ax * s, ay * s, s, 3, held);
}
