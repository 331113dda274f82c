// Guess the number: a small text env with a tool-like call. The env draws a secret whole number
// from 1 to 100 from the seed; the agent writes guess(n) and reads "higher", "lower" or
// "correct". Binary search needs at most 7 calls; the reward falls with every extra call.
//
// Contract: export `env`, `reset(seed)` returning the first observation (a string) and
// `step(action)` (the agent's text) returning { observation, reward, terminated, truncated, info }.
// A text env must answer a malformed action with an observation, never an exception. The optional
// `expert()` says what a good player would write next (the token policy imitates it first).
export const env = {
  title: 'Guess the number (code)',
  description: 'Find a secret whole number from 1 to 100 by calling guess(n); the env answers higher, lower or correct. Binary search finds it in at most 7 calls; the reward falls with each call after the first.',
  actions: ['guess'],
  observation: { kind: 'text', maxLength: 120 },
  maxSteps: 10,
  rewardRange: [0, 1],
};

// All randomness comes from the seed (mulberry32), so the same seed replays the same episode.
function seeded(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// What the answers so far leave open: the expert's binary search reads only these.
let secret = 0, calls = 0, lo = 1, hi = 100;

export function reset(seed) {
  secret = 1 + Math.floor(seeded(seed)() * 100);
  calls = 0; lo = 1; hi = 100;
  return 'Find my number in 1..100 with guess(n).';
}

export function step(action) {
  calls++;
  const out = (observation, reward, terminated, info) => ({
    observation, reward, terminated, truncated: !terminated && calls >= env.maxSteps, info,
  });
  const m = /^\s*guess\(\s*(\d{1,3})\s*\)\s*$/.exec(action);
  if (!m) return out('error: write guess(n) with a whole number n from 1 to 100', 0, false, { malformed: true });
  const n = Number(m[1]);
  if (n < 1 || n > 100) return out(`error: ${n} is outside 1..100`, 0, false, { malformed: true });
  if (n === secret) return out(`correct: it was ${n}`, Math.max(0.1, 1 - 0.1 * (calls - 1)), true, { success: true, toolCall: 'guess' });
  if (n < secret) lo = Math.max(lo, n + 1);
  else hi = Math.min(hi, n - 1);
  return out(n < secret ? 'higher' : 'lower', 0, false, { toolCall: 'guess' });
}

export function expert() {
  return `guess(${(lo + hi) >> 1})`;
}
