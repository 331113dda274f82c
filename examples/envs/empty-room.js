// The empty room (grid/empty-8x8) as a code env: a walled 8x8 room, the agent starts in the
// top-left corner facing east and walks to the green goal in the bottom-right corner.
// Same rules, view and reward as the built-in env, in plain JavaScript.
//
// Contract: export `env` (title, description, actions, observation, maxSteps, rewardRange),
// `reset(seed)` returning the first observation, and `step(action)` returning
// { observation, reward, terminated, truncated, info }. A grid observation is
// { image: view*view*3 cell codes (object, colour, state), direction: 0 east .. 3 north }.
export const env = {
  title: 'Empty room 8x8 (code)',
  description: 'An empty 8x8 walled room: walk from the top-left corner to the green goal in the bottom-right corner. The reward falls with every step taken.',
  actions: ['left', 'right', 'forward', 'pickup', 'drop', 'toggle', 'done'],
  observation: { kind: 'grid', view: 7 },
  maxSteps: 256,
  rewardRange: [0, 1],
};

const SIZE = 8, VIEW = 7, HALF = 3;
const WALL = 2, EMPTY = 1, GOAL = 8, GREY = 5, GREEN = 1;
const DX = [1, 0, -1, 0], DY = [0, 1, 0, -1];
let x = 1, y = 1, dir = 0, steps = 0, ended = true;

// The room never changes: type and colour of each cell, row-major.
const TYPE = [], COLOUR = [];
for (let j = 0; j < SIZE; j++) {
  for (let i = 0; i < SIZE; i++) {
    const wall = i === 0 || j === 0 || i === SIZE - 1 || j === SIZE - 1;
    const goal = i === SIZE - 2 && j === SIZE - 2;
    TYPE.push(wall ? WALL : goal ? GOAL : EMPTY);
    COLOUR.push(wall ? GREY : goal ? GREEN : 0);
  }
}

// What the agent sees: a VIEW x VIEW window ahead of it, rotated so that it faces up, with
// the cells hidden behind walls blanked (MiniGrid's visibility rule).
function observe() {
  const image = new Array(VIEW * VIEW * 3).fill(0);
  const fx = DX[dir], fy = DY[dir], rx = DX[(dir + 1) & 3], ry = DY[(dir + 1) & 3];
  const clear = new Array(VIEW * VIEW).fill(false);
  for (let row = 0; row < VIEW; row++) {
    for (let col = 0; col < VIEW; col++) {
      const ahead = VIEW - 1 - row, right = col - HALF;
      const cx = x + fx * ahead + rx * right, cy = y + fy * ahead + ry * right;
      const k = row * VIEW + col;
      const inside = cx >= 0 && cy >= 0 && cx < SIZE && cy < SIZE;
      image[k * 3] = inside ? TYPE[cy * SIZE + cx] : WALL;
      image[k * 3 + 1] = inside ? COLOUR[cy * SIZE + cx] : GREY;
      clear[k] = image[k * 3] !== WALL;
    }
  }
  const me = (VIEW - 1) * VIEW + HALF;
  image[me * 3] = EMPTY; // the agent's own cell shows what it carries: nothing
  image[me * 3 + 1] = 0;
  clear[me] = true;
  const vis = new Array(VIEW * VIEW).fill(false);
  vis[me] = true;
  for (let row = VIEW - 1; row >= 0; row--) {
    const base = row * VIEW;
    for (let col = 0; col < VIEW - 1; col++) {
      const i = base + col;
      if (!vis[i] || !clear[i]) continue;
      vis[i + 1] = true;
      if (row > 0) vis[i - VIEW + 1] = vis[i - VIEW] = true;
    }
    for (let col = VIEW - 1; col > 0; col--) {
      const i = base + col;
      if (!vis[i] || !clear[i]) continue;
      vis[i - 1] = true;
      if (row > 0) vis[i - VIEW - 1] = vis[i - VIEW] = true;
    }
  }
  for (let k = 0; k < VIEW * VIEW; k++) if (!vis[k]) image[k * 3] = image[k * 3 + 1] = image[k * 3 + 2] = 0;
  return { image, direction: dir };
}

export function reset(_seed) {
  // The room and the start are fixed: the seed changes nothing here.
  x = 1; y = 1; dir = 0; steps = 0; ended = false;
  return observe();
}

export function step(action) {
  if (ended) throw new Error('step() after the episode ended: call reset() first');
  steps++;
  let success = false;
  if (action === 0) dir = (dir + 3) & 3;
  else if (action === 1) dir = (dir + 1) & 3;
  else if (action === 2) {
    const nx = x + DX[dir], ny = y + DY[dir];
    if (TYPE[ny * SIZE + nx] !== WALL) { x = nx; y = ny; }
    success = TYPE[y * SIZE + x] === GOAL;
  }
  const terminated = success;
  const truncated = !terminated && steps >= env.maxSteps;
  ended = terminated || truncated;
  const reward = success ? 1 - (0.9 * steps) / env.maxSteps : 0;
  return { observation: observe(), reward, terminated, truncated, info: ended ? { success } : {} };
}
