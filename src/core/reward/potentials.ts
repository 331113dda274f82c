/**
 * Potentials Φ for potential-based shaping (`shaping.ts`), one per env family.
 * Any bounded Φ keeps the optimal policy (Ng et al. 1999); a good Φ only makes learning faster,
 * so these may be rough approximations of the true value.
 */
import type { Frame } from '../envs/types.ts';
import { OBJ } from '../envs/grid/objects.ts';
import type { Potential } from './shaping.ts';

/**
 * Grid worlds: Φ(s) = −(shortest walking distance, in cells, from the agent to the nearest goal).
 * Walls and lava block; doors (in any state) and objects count as passable, so the distance is
 * optimistic in door-key layouts (it ignores fetching the key and turning). No reachable goal:
 * Φ = −(width·height), below every reachable distance.
 */
export const gridGoalDistance: Potential<Frame> = {
  id: 'grid/neg-goal-distance',
  doc: 'Minus the BFS walking distance (cells) from the agent to the nearest goal; walls and lava block.',
  phi(frame: Frame): number {
    if (frame.kind !== 'grid') throw new TypeError(`gridGoalDistance: needs a grid frame, got '${frame.kind}'`);
    const { width: W, height: H, cells, agent } = frame;
    const dist = new Int32Array(W * H).fill(-1);
    const queue = new Int32Array(W * H);
    let head = 0, tail = 0;
    const start = agent.y * W + agent.x;
    dist[start] = 0;
    queue[tail++] = start;
    while (head < tail) {
      const p = queue[head++];
      if (cells[p * 3] === OBJ.goal) return -dist[p];
      const x = p % W, y = (p - x) / W;
      const next = [x > 0 ? p - 1 : -1, x < W - 1 ? p + 1 : -1, y > 0 ? p - W : -1, y < H - 1 ? p + W : -1];
      for (const q of next) {
        if (q < 0 || dist[q] >= 0) continue;
        const t = cells[q * 3];
        if (t === OBJ.wall || t === OBJ.lava) continue;
        dist[q] = dist[p] + 1;
        queue[tail++] = q;
      }
    }
    return -(W * H);
  },
};
