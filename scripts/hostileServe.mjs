/**
 * Hostile code envs against a real `npm run serve` (loopback only): a seed-sized array (POST /reset
 * {"seed": 50000000}), a looping step and a 200 MB string from step(), each while a bystander
 * session steps; prints each answer, /health and the bystander's step latencies, and the server's
 * RSS. Run: node scripts/hostileServe.mjs  (about 20 s; Linux, reads /proc for RSS)
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

const room = readFileSync(new URL('../examples/envs/empty-room.js', import.meta.url), 'utf8');
// The room, hostile on chosen seeds only (so it passes the check, which plays small seeds).
const hostileCode = room
  .replace('export function reset(_seed) {', 'let S = 0;\nexport function reset(_seed) {\n  S = _seed;\n  globalThis.keep = new Array(_seed).fill(0);')
  .replace('export function step(action) {', "export function step(action) {\n  if (S === 777) while (true) {}\n  if (S === 778) return { observation: 'x'.repeat(2e8), reward: 0, terminated: false, truncated: false, info: {} };");
const file = join(mkdtempSync(join(tmpdir(), 'hostile-')), 'hostile.js');
writeFileSync(file, hostileCode);
const rss = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/serve.ts', '--env-file', file, '--port', '0', '--latency', 'skip'], { stdio: ['ignore', 'pipe', 'pipe'] });
let errOut = ''; child.stderr.on('data', (d) => (errOut += d));
const url = await new Promise((res, rej) => { let o = ''; const t = setTimeout(() => rej(new Error(o + errOut)), 60000); child.stdout.on('data', (d) => { o += d; const m = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(o); if (m) { clearTimeout(t); res(m[1]); } }); });
const post = async (path, body) => { const t = performance.now(); const r = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }); const j = await r.json(); return { status: r.status, j, ms: performance.now() - t }; };
const health = async () => { const t = performance.now(); const r = await fetch(url + '/health'); await r.text(); return performance.now() - t; };
await post('/reset', { seed: 5, session_id: 'by' });
for (let i = 0; i < 3; i++) await post('/step', { session_id: 'by', action: { action_id: 2 } });
const base = rss(child.pid);
console.log(`server RSS at start (one session): ${base.toFixed(0)} MB`);
async function hostile(name, req) {
  const p = req();
  const hs = [], bys = [];
  for (let k = 0; k < 4; k++) { hs.push(await health()); const b = await post('/step', { session_id: 'by', action: { action_id: k % 2 ? 1 : 0 } }); bys.push(b.status === 200 ? b.ms : -b.status); await new Promise((r) => setTimeout(r, 80)); }
  const r = await p;
  console.log(`${name}: ${r.status} in ${r.ms.toFixed(0)} ms: ${String(r.j.detail).slice(0, 110)}; /health meanwhile ${hs.map((x) => x.toFixed(0)).join(', ')} ms; bystander steps ${bys.map((x) => x.toFixed(0)).join(', ')} ms; server RSS ${rss(child.pid).toFixed(0)} MB`);
}
await hostile('POST /reset {"seed": 50000000}', () => post('/reset', { seed: 50000000, session_id: 'h1' }));
await post('/reset', { seed: 777, session_id: 'h2' });
await hostile('looping step (seed 777)', () => post('/step', { session_id: 'h2', action: { action_id: 2 } }));
await post('/reset', { seed: 778, session_id: 'h3' });
await hostile('200 MB string from step (seed 778)', () => post('/step', { session_id: 'h3', action: { action_id: 2 } }));
console.log(`server alive: ${child.exitCode === null}; stderr lines: ${errOut.split('\n').filter(Boolean).length}`);
child.kill('SIGTERM');
process.exit(0);
