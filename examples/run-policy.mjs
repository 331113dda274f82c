#!/usr/bin/env node
/**
 * Plays an exported token policy (a transformer run's policy.onnx) against `npm run serve`, using
 * only the run's policy.json, onnxruntime-node and HTTP: the context framing, the tokenizer and
 * what the cache and position inputs mean all come from policy.json.
 *
 *   npm run serve -- --env tools/calculator --port 8000 --latency skip     # in one terminal
 *   node examples/run-policy.mjs runs/calc --url http://127.0.0.1:8000 --episodes 5 --seed 2000000000 --greedy
 *
 * Each episode: POST /reset {seed, session_id}; the context <bos> <obs> task is fed one token per
 * ONNX call (pos = the token's position, the cache carried from call to call); the action is then
 * sampled token by token (a seeded draw from exp(logprobs), or argmax with --greedy) until <eoa> or
 * maxActionTokens; its text goes to POST /step, and <obs> with the reply is fed before the next
 * action. The episode ends when the env says done or the context is full. Prints one line per
 * episode and, last, one JSON object: every episode's seed, actions, return and success.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as ort from 'onnxruntime-node';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { url: { type: 'string', default: 'http://127.0.0.1:8000' }, episodes: { type: 'string', default: '5' }, seed: { type: 'string', default: '2000000000' }, greedy: { type: 'boolean', default: false } },
});
const folder = positionals[0];
if (!folder) {
  console.error('usage: node examples/run-policy.mjs <folder with policy.onnx and policy.json> [--url URL] [--episodes N] [--seed S] [--greedy]');
  process.exit(2);
}
const card = JSON.parse(readFileSync(join(folder, 'policy.json'), 'utf8'));
if (card.observation?.kind !== 'tokens' || !card.observation.tokenizer) {
  console.error(`this example plays token policies described by policy.json's tokenizer and framing; ${join(folder, 'policy.json')} describes a "${card.observation?.kind}" policy${card.observation?.kind === 'tokens' ? ' from before policy.json carried them: export it again' : ''}`);
  process.exit(2);
}
const obs = card.observation;
const vocab = card.actions.vocabulary;
const ids = obs.framing.ids;

// The tokenizer, as policy.json's rule states it: longest whole-word token first, else one character, else <unk>.
const words = obs.tokenizer.wordTokens.map((w) => ({ w, id: vocab.indexOf(w) })).sort((a, b) => b.w.length - a.w.length);
const charId = new Map([...obs.tokenizer.characterIds.characters].map((c, i) => [c, obs.tokenizer.characterIds.first + i]));
function encode(text) {
  const out = [];
  for (let i = 0; i < text.length; ) {
    const word = words.find((x) => text.startsWith(x.w, i));
    if (word) {
      out.push(word.id);
      i += word.w.length;
    } else {
      out.push(charId.get(text[i]) ?? ids.unk);
      i++;
    }
  }
  return out;
}
const decode = (tokens) => tokens.map((t) => vocab[t]).join('');

const session = await ort.InferenceSession.create(join(folder, 'policy.onnx'));
const caches = card.onnx.inputs.filter((t) => t.name.startsWith('past.'));

/** One episode's decoder: the cache and the next position; feed() returns log π(next | context). */
function decoder() {
  let past = Object.fromEntries(caches.map((t) => [t.name, new ort.Tensor('float32', new Float32Array(t.shape.reduce((a, b) => a * b, 1)), t.shape)]));
  let pos = 0;
  return {
    get length() {
      return pos;
    },
    async feed(token) {
      const out = await session.run({ tokens: new ort.Tensor('int32', Int32Array.of(token), [1, 1]), pos: new ort.Tensor('int32', Int32Array.of(pos), [1]), ...past });
      past = Object.fromEntries(caches.map((t) => [t.name, out[t.name.replace(/^past\./, 'present.')]]));
      pos++;
      return out.logprobs.data;
    },
  };
}

/** mulberry32: a small seeded generator, so a seed plays the same episode every time. */
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

function pick(logp, random) {
  let best = 0;
  if (values.greedy) {
    for (let i = 1; i < logp.length; i++) if (logp[i] > logp[best]) best = i;
    return best;
  }
  let u = random();
  for (let i = 0; i < logp.length; i++) {
    u -= Math.exp(logp[i]);
    if (u <= 0) return i;
  }
  return logp.length - 1;
}

async function post(route, body) {
  const res = await fetch(`${values.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${route}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function episode(seed) {
  const sid = `run-policy-${seed}-${process.pid}`;
  const random = rng(seed);
  const d = decoder();
  const reset = await post('/reset', { seed, session_id: sid, ...(card.env.kwargs ?? {}) });
  let logp;
  const feedAll = async (tokens) => {
    for (const t of tokens.slice(0, obs.context - d.length)) logp = await d.feed(t);
  };
  await feedAll([ids.bos, ids.obs, ...encode(reset.observation.text)]);
  const actions = [];
  let ret = 0, success = false;
  for (;;) {
    // Sample one action; every sampled token (<eoa> too) joins the context.
    const action = [];
    for (;;) {
      const t = pick(logp, random);
      if (t !== ids.eoa) action.push(t);
      const ended = t === ids.eoa || action.length >= obs.maxActionTokens;
      // The token takes position d.length; an unfinished action with no position left ends the episode unsent.
      if (!ended && d.length + 1 >= obs.context) return finish();
      logp = await d.feed(t);
      if (ended) break;
    }
    const text = decode(action);
    const step = await post('/step', { action: { text }, session_id: sid });
    actions.push(text);
    ret += step.reward ?? 0;
    success = step.observation.info?.success === true;
    if (step.done) return finish();
    await feedAll([ids.obs, ...encode(step.observation.text)]);
    if (d.length >= obs.context) return finish(); // the reply filled the context
  }

  async function finish() {
    await post('/close', { session_id: sid }).catch(() => {});
    return { seed, actions, return: ret, success };
  }
}

const first = Number(values.seed);
const results = [];
for (let i = 0; i < Number(values.episodes); i++) {
  const r = await episode(first + i);
  results.push(r);
  console.log(`seed ${r.seed}: ${r.success ? 'solved' : 'not solved'}, return ${r.return.toFixed(3)}, ${r.actions.length} actions`);
}
console.log(JSON.stringify({ episodes: results, successRate: results.filter((r) => r.success).length / results.length }));
