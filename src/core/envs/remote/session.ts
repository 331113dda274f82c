/**
 * What a remote env needs from the platform: a synchronous session with an OpenEnv server. The
 * network lives outside core (src/runtime/openenv: a client on its own thread, bridged so that
 * each call returns a value, as the env contract wants); a thread that can reach a server
 * installs its session maker here before any remote env is reset.
 */

/** OpenEnv's reset/step reply (`done` = terminated or truncated; `reward` null after a reset). */
export interface RemoteResult {
  observation: Record<string, unknown>;
  reward: number | null;
  done: boolean;
}

/** One tool an MCP env offers (tools/list), its argument schema as JSON Schema. */
export interface RemoteTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** One env session on a server; every call blocks until the reply, or throws a named error. */
export interface RemoteSession {
  reset(fields: Record<string, unknown>): RemoteResult;
  step(action: Record<string, unknown>): RemoteResult;
  state(): Record<string, unknown>;
  listTools(): RemoteTool[];
  /** Ends the session on the server (never throws; the server's idle timeout is the backstop). */
  close(): void;
}

/** How a session is opened. */
export interface RemoteSessionOptions {
  /** Server address (ws://, wss://, http://, https://, with the env's path prefix if any). */
  url: string;
  /** 'auto': WebSocket, else HTTP; 'ws' or 'http' to insist. */
  transport: 'auto' | 'ws' | 'http';
  /** Longest wait for one reply, ms. */
  timeoutMs: number;
}

export type RemoteSessionMaker = (options: RemoteSessionOptions) => RemoteSession;

let maker: RemoteSessionMaker | null = null;

/** Installs this thread's session maker (src/runtime/openenv/link.ts does, once it can block on a network thread). */
export function installRemoteSessions(m: RemoteSessionMaker | null): void {
  maker = m;
}

/** Opens a session, or says why this thread cannot. */
export function openRemoteSession(options: RemoteSessionOptions): RemoteSession {
  if (!maker) {
    throw new Error(
      `remote env at ${options.url}: this thread has no network link for remote envs (a program that trains on remote/openenv awaits ensureEnvLink() from src/runtime/envLinks.ts first; a page's main thread cannot play remote envs, a worker can)`,
    );
  }
  return maker(options);
}
