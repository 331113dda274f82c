/**
 * The network thread's side of remote env sessions: one OpenEnvClient per session id, driven by
 * the requests a blocked env thread writes into the bridge (syncBridge.ts).
 */
import { OpenEnvClient } from './client.ts';
import { OpenEnvError } from './errors.ts';
import type { BridgeRequest } from './syncBridge.ts';
import type { WsConstructor } from './wsChannel.ts';

/** Longest wait for a WebSocket to open, ms (a session's own timeout, when shorter, wins). */
const CONNECT_TIMEOUT_MS = 5_000;

interface Args {
  id: number;
  url?: string;
  transport?: 'auto' | 'ws' | 'http';
  timeoutMs?: number;
  fields?: Record<string, unknown>;
  action?: Record<string, unknown>;
}

/** Answers bridge requests: open, reset, step, state, listTools, close (each names its session `id`). */
export function sessionHandler(WebSocket?: WsConstructor): (req: BridgeRequest) => Promise<unknown> {
  const clients = new Map<number, OpenEnvClient>();
  const client = (id: number): OpenEnvClient => {
    const c = clients.get(id);
    if (!c) throw new OpenEnvError('SESSION_ERROR', `remote env session ${id} is not open (it was closed)`);
    return c;
  };
  return async ({ op, args }) => {
    const a = args as Args;
    switch (op) {
      case 'open': {
        const timeoutMs = a.timeoutMs ?? 10_000;
        clients.set(a.id, new OpenEnvClient({ url: a.url ?? '', transport: a.transport ?? 'auto', timeoutMs, connectTimeoutMs: Math.min(CONNECT_TIMEOUT_MS, timeoutMs), WebSocket }));
        return null;
      }
      case 'reset':
        return client(a.id).reset(a.fields ?? {});
      case 'step':
        return client(a.id).step(a.action ?? {});
      case 'state':
        return client(a.id).state();
      case 'listTools':
        return client(a.id).mcp.listTools();
      case 'close': {
        const c = clients.get(a.id);
        clients.delete(a.id);
        await c?.dispose();
        return null;
      }
      default:
        throw new OpenEnvError('UNKNOWN_TYPE', `remote env bridge: unknown request ${op}`);
    }
  };
}
