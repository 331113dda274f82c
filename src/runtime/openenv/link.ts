/**
 * Remote envs in this thread: `await ensureRemoteEnvs()` once before any remote env is reset
 * (envLinks.ts calls it for remote env ids). It starts a network thread (a Web Worker, or a
 * worker_thread in Node, whose entry points import ../envLinks.node.ts), shares a bridge buffer with it, and installs
 * the session maker core's remote env calls: each call then blocks this thread until the network
 * thread has the reply (syncBridge.ts). The start is awaited because a blocked thread could not
 * start its network thread; afterwards everything is synchronous.
 */
import { installRemoteSessions, type RemoteResult, type RemoteSession, type RemoteSessionOptions, type RemoteTool } from '../../core/envs/remote/session.ts';
import { BRIDGE_BYTES, SyncCaller } from './syncBridge.ts';
import { startLinkThread } from '../linkThread.ts';

/** Beyond a session's own timeout, how long a call may take before the thread counts as gone, ms (room for reconnects). */
const BACKSTOP_MS = 15_000;

/** The Node thread's bootstrap, next to this file (a variable, so the browser bundler leaves it out). */
const NODE_ENTRY = './ioThread.node.mjs';

let started: { ready: Promise<void>; caller: SyncCaller } | null = null;
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

/** Starts this thread's network thread (once; later calls await the same start). Called through envLinks.ts for remote env ids. */
export async function ensureRemoteEnvs(): Promise<void> {
  if (!started) {
    if (typeof SharedArrayBuffer === 'undefined') throw new Error('remote envs need SharedArrayBuffer: the page must be cross-origin isolated (COOP same-origin, COEP require-corp)');
    const buffer = new SharedArrayBuffer(BRIDGE_BYTES);
    const ready = startLinkThread({
      name: 'remote envs: the network thread',
      web: () => new Worker(new URL('./ioThread.browser.ts', import.meta.url), { type: 'module', name: 'openenv-network' }),
      node: () => new URL(NODE_ENTRY, import.meta.url),
      init: { buffer },
    });
    const caller = new SyncCaller(buffer);
    started = { ready, caller };
    installRemoteSessions((o) => session(caller, o));
  }
  await started.ready;
}
