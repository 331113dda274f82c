import { afterEach, describe, expect, it } from 'vitest';
import { expose } from 'comlink';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { nodeEndpoint } from '../pool/nodeEndpoint.ts';
import { DeathSignal } from '../workerDeath.ts';
import { remoteTokenSource, type TokenWorkerHandle } from './source.ts';
import type { TokenSourceInit } from '../../core/rollout/tokenSource.ts';

/**
 * The trainer's side of a token worker against a stand-in worker on a MessageChannel: `next()`
 * never resolves (an episode that takes long), and the stand-in either keeps answering pings (a
 * busy worker) or goes quiet as a browser worker that closes itself does (no event at all).
 */
function standIn(): { handle: TokenWorkerHandle; port: MessagePort; goQuiet(): void; terminated: () => boolean } {
  const { port1, port2 } = new MessageChannel();
  let quiet = false;
  let terminated = false;
  const api = {
    init: () => undefined,
    next: () => new Promise(() => undefined),
    ping: () => (quiet ? new Promise(() => undefined) : true),
    close: () => undefined,
  };
  expose(api, nodeEndpoint(port2));
  const death = new DeathSignal();
  const handle: TokenWorkerHandle = {
    endpoint: nodeEndpoint(port1),
    death,
    name: 'token rollout worker',
    terminate: () => {
      terminated = true;
      death.fail(new Error('token rollout worker was terminated'));
      return Promise.resolve();
    },
  };
  return { handle, port: port1, goQuiet: () => (quiet = true), terminated: () => terminated };
}

const ports: MessagePort[] = [];
afterEach(() => {
  for (const p of ports.splice(0)) p.close();
});

describe('token worker watchdog', () => {
  it('a worker that goes quiet during next() is declared dead within stallMs, naming the call; the worker is terminated', async () => {
    const w = standIn();
    ports.push(w.port);
    const source = await remoteTokenSource(w.handle, {} as TokenSourceInit, undefined, { stallMs: 600, pingEveryMs: 100 });
    const t0 = performance.now();
    const next = source.next();
    w.goQuiet();
    await expect(next).rejects.toThrow(/token rollout worker stopped answering for \d+(\.\d+)? s during next \(closed, stuck in a loop or out of memory\)/);
    const ms = performance.now() - t0;
    expect(ms).toBeGreaterThanOrEqual(600);
    expect(ms).toBeLessThan(5000);
    expect(w.terminated()).toBe(true);
  });

  it('a busy worker that answers its pings is left alone, however long its call takes', async () => {
    const w = standIn();
    ports.push(w.port);
    const source = await remoteTokenSource(w.handle, {} as TokenSourceInit, undefined, { stallMs: 300, pingEveryMs: 50 });
    const next = source.next().then(
      () => 'answered',
      (e: Error) => e.message,
    );
    const outcome = await Promise.race([next, new Promise((r) => setTimeout(() => r('still waiting'), 1500))]);
    expect(outcome).toBe('still waiting');
    expect(w.handle.death.reason).toBeNull();
    w.handle.death.fail(new Error('test over'));
  });
});
