#!/usr/bin/env node
/**
 * Plays a trained grid policy against `npm run serve`, outside this project: only
 * onnxruntime-node, the run folder's policy.onnx and policy.json, and HTTP.
 *
 *   npm run serve -- --env grid/empty-8x8 --port 8000        # in one terminal
 *   node examples/policy/play.mjs runs/mine --url http://127.0.0.1:8000 --episodes 5 --seed 1000
 *
 * Each episode: POST /reset with a seed and a session id, then POST /step with an action drawn
 * from the policy (exp of its log-probabilities, a seeded draw), or its argmax with --greedy,
 * until `done`. The policy was trained sampling: a young one often succeeds sampled and loops
 * greedily (the Train view shows both rates). The observation (a 7×7×3 `image`
 * and a `direction`) becomes the policy's input as policy.json's `observation` says. Prints one
 * line per episode and, last, one JSON object: the mean return and the success rate.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as ort from 'onnxruntime-node';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { url: { type: 'string', default: 'http://127.0.0.1:8000' }, episodes: { type: 'string', default: '5' }, seed: { type: 'string', default: '1000' }, greedy: { type: 'boolean', default: false } },
});
const folder = positionals[0];
if (!folder) {
  console.error('usage: node examples/policy/play.mjs <run folder with policy.onnx and policy.json> [--url URL] [--episodes N] [--seed S] [--greedy]');
  process.exit(2);
}
const card = JSON.parse(readFileSync(join(folder, 'policy.json'), 'utf8'));
if (card.observation?.kind !== 'grid-one-hot') {
  console.error(`this example plays grid MLP policies; ${join(folder, 'policy.json')} describes a "${card.observation?.kind}" policy`);
  process.exit(2);
}
const session = await ort.InferenceSession.create(join(folder, 'policy.onnx'));
const obs = card.observation;
const [types, colors, states] = [obs.cellTypes.length, obs.cellColors.length, obs.cellStates.length];
const perCell = types + colors + states;

/** policy.json's layout: per view cell one-hot type, colour, state; then the one-hot heading. */
function features(o) {
  const x = new Float32Array(obs.floats);
  for (let c = 0; c < o.image.length / 3; c++) {
    x[perCell * c + o.image[3 * c]] = 1;
    x[perCell * c + types + o.image[3 * c + 1]] = 1;
    x[perCell * c + types + colors + o.image[3 * c + 2]] = 1;
  }
  x[obs.floats - obs.headings.length + o.direction] = 1;
  return x;
}

async function post(route, body) {
  const res = await fetch(`${values.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${route}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** mulberry32: a small seeded generator, so a seed plays the same episode every time. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The action: argmax of the log-probabilities, or a draw from their exp. */
function act(lp, random) {
  let a = 0;
  for (let i = 1; i < lp.length; i++) if (lp[i] > lp[a]) a = i;
  if (values.greedy) return a;
  let u = random();
  for (let i = 0; i < lp.length; i++) {
    u -= Math.exp(lp[i]);
    if (u < 0) return i;
  }
  return a;
}

const input = card.onnx.inputs[0].name;
const output = card.onnx.outputs[0].name;
let total = 0;
let successes = 0;
const episodes = Number(values.episodes);
for (let e = 0; e < episodes; e++) {
  const seed = Number(values.seed) + e;
  const sessionId = `play-${process.pid}-${e}`;
  let r = await post('/reset', { seed, session_id: sessionId });
  let ret = 0;
  let steps = 0;
  const random = rng(seed);
  while (!r.done) {
    const out = await session.run({ [input]: new ort.Tensor('float32', features(r.observation), [1, obs.floats]) });
    const a = act(out[output].data, random);
    r = await post('/step', { action: { action_id: a }, session_id: sessionId });
    ret += r.reward ?? 0;
    steps++;
  }
  const success = r.observation.info?.success === true;
  await post('/close', { session_id: sessionId });
  total += ret;
  successes += success ? 1 : 0;
  console.log(`seed ${seed}: return ${ret.toFixed(3)} in ${steps} steps, ${success ? 'reached the goal' : 'did not reach the goal'}`);
}
console.log(JSON.stringify({ episodes, play: values.greedy ? 'greedy' : 'sampled', mean_return: total / episodes, success_rate: successes / episodes }));
