/**
 * A WebSocket client that sends without reading its replies (loopback only, bounded in count and
 * time). Before flow control the server kept every reply: 2 million small messages grew a served
 * process from 145 MB to 1,216 MB in 68 s, and kept it. Now it stops reading from the connection
 * (TCP holds the client back) and closes it when the replies stay untaken.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startServer } from './server.ts';

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function serve(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/serve.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no banner in 40 s: ${out}`)), 40_000);
    child.stdout!.on('data', (d) => {
      out += d.toString();
      const m = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  return { child, url };
}

describe('a WebSocket client that never reads its replies', () => {
  it('cannot grow the server: reading from it stops, its replies stay bounded, and it is hung up after --ws-stall', { timeout: 90_000 }, async () => {
    const { child, url } = await serve(['--env', 'grid/empty-8x8', '--port', '0', '--ws-stall', '3']);
    try {
      const ws = new WebSocket(`${url.replace('http', 'ws')}/ws`);
      await new Promise((r) => ws.once('open', r));
      ws.send(JSON.stringify({ type: 'reset', data: { seed: 1 } }));
      await sleep(300);
      const before = rssMb(child.pid!);
      // Never read: the client's socket stops reading, so the server's replies queue up behind it.
      ws.pause();
      const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
      ws.on('error', () => undefined);
      const msg = JSON.stringify({ type: 'state' });
      let sent = 0;
      let peak = before;
      const t0 = performance.now();
      // Up to 400k messages or 12 s; the client only writes while its own buffer is small (the server stops reading it).
      while (sent < 400_000 && performance.now() - t0 < 12_000 && ws.readyState === WebSocket.OPEN) {
        if (ws.bufferedAmount < 1 << 20) for (let k = 0; k < 2000; k++, sent++) ws.send(msg);
        await sleep(5);
        peak = Math.max(peak, rssMb(child.pid!));
      }
      const sentFor = performance.now() - t0;
      // Replies are left untaken past --ws-stall (3 s): the server hangs up. The client then reads what reached it, and sees the end.
      await sleep(4000);
      peak = Math.max(peak, rssMb(child.pid!));
      ws.resume();
      const code = await Promise.race([closed, sleep(15_000).then(() => -1)]);
      await sleep(500);
      const after = rssMb(child.pid!);
      console.log(`never-reading client: ${sent} messages sent in ${(sentFor / 1000).toFixed(1)} s (the loop ends at 400k messages, 12 s or the hang-up); server RSS ${before.toFixed(0)} MB before, ${peak.toFixed(0)} MB at most, ${after.toFixed(0)} MB after the hang-up (close code ${code})`);
      expect(code).not.toBe(-1);
      expect(code).not.toBe(1000);
      expect(peak - before).toBeLessThan(80);
      // The server still serves.
      expect((await fetch(`${url}/health`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('more messages at once than the queue takes: closed with 1008 and the reason', { timeout: 30_000 }, async () => {
    const server = await startServer({ envs: ['grid/empty-8x8'], port: 0, latency: 'skip', wsMaxPending: 8, wsMaxQueued: 50 });
    try {
      const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws`);
      await new Promise((r) => ws.once('open', r));
      const closed = new Promise<{ code: number; reason: string }>((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));
      // One burst: many frames reach the server in one read, past the queue's 50.
      const msg = JSON.stringify({ type: 'state' });
      for (let k = 0; k < 3000; k++) ws.send(msg);
      const c = await closed;
      expect(c.code).toBe(1008);
      expect(c.reason).toBe('more than 50 messages waiting for replies: read the replies, or send fewer at once');
    } finally {
      await server.close();
    }
  });
});
