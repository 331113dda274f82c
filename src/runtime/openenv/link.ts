/**
 * Remote envs in this thread: `await ensureRemoteEnvs(envId)` once before any remote env is reset
 * (a no-op for other env ids). It starts a network thread (a Web Worker, or a worker_thread in
 * Node, which imports ./node.ts at its entry points), shares a bridge buffer with it, and installs
 * the session maker core's remote env calls: each call then blocks this thread until the network
 * thread has the reply (syncBridge.ts). The start is awaited because a blocked thread could not
 * start its network thread; afterwards everything is synchronous.
 */
import { installRemoteSessions, type RemoteResult, type RemoteSession, type RemoteSessionOptions, type RemoteTool } from '../../core/envs/remote/session.ts';
import { BRIDGE_BYTES, SyncCaller } from './syncBridge.ts';

/** A started network thread: the buffer it serves, and when it is ready to. */
export interface NetworkThread {
  buffer: SharedArrayBuffer;
  ready: Promise<void>;
}

/** Beyond a session's own timeout, how long a call may take before the thread counts as gone, ms (room for reconnects). */
const BACKSTOP_MS = 15_000;

function spawnWebWorker(): NetworkThread {
  if (typeof Worker === 'undefined') throw new Error('remote envs: no Worker in this runtime (Node entry points import src/runtime/openenv/node.ts first)');
  if (typeof SharedArrayBuffer === 'undefined') throw new Error('remote envs need SharedArrayBuffer: the page must be cross-origin isolated (COOP same-origin, COEP require-corp)');
  const buffer = new SharedArrayBuffer(BRIDGE_BYTES);
  const worker = new Worker(new URL('./ioThread.browser.ts', import.meta.url), { type: 'module', name: 'openenv-network' });
  const ready = new Promise<void>((resolve, reject) => {
    worker.addEventListener('message', () => resolve(), { once: true });
    worker.addEventListener('error', (e) => reject(new Error(`remote envs: the network thread failed to start: ${e.message || 'script error'}`)));
  });
  worker.postMessage({ buffer });
  return { buffer, ready };
}

let spawnThread: () => NetworkThread = spawnWebWorker;

/** How this platform starts its network thread (node.ts sets worker_threads). */
export function useNetworkThread(spawn: () => NetworkThread): void {
  spawnThread = spawn;
}

let started: { thread: NetworkThread; caller: SyncCaller } | null = null;
let nextId = 0;

function session(caller: SyncCaller, o: RemoteSessionOptions): RemoteSession {
  const id = ++nextId;
  const limit = o.timeoutMs * 2 + BACKSTOP_MS;
  caller.call('open', { id, url: o.url, transport: o.transport, timeoutMs: o.timeoutMs }, limit);
  let open = true;
  return {
    reset: (fields) => caller.call('reset', { id, fields }, limit) as RemoteResult,
    step: (action) => caller.call('step', { id, action }, limit) as RemoteResult,
    state: () => caller.call('state', { id }, limit) as Record<string, unknown>,
    listTools: () => caller.call('listTools', { id }, limit) as RemoteTool[],
    close() {
      if (!open) return;
      open = false;
      try {
        caller.call('close', { id }, limit);
      } catch {
        // A dead server or thread: the server's idle timeout frees the place.
      }
    },
  };
}

/** Starts this thread's network thread when `envId` is a remote env (or when no id is given). */
export async function ensureRemoteEnvs(envId?: string): Promise<void> {
  if (envId !== undefined && !envId.startsWith('remote/')) return;
  if (!started) {
    const thread = spawnThread();
    const caller = new SyncCaller(thread.buffer);
    started = { thread, caller };
    installRemoteSessions((o) => session(caller, o));
  }
  await started.thread.ready;
}
