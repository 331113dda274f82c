/**
 * What can go wrong talking to an OpenEnv server, as one error class with a code and a sentence a
 * person can act on. Server codes are OpenEnv's own (its WebSocket `error` messages, or the HTTP
 * status that means the same); client codes name what the client saw itself.
 */

/** OpenEnv's WebSocket error codes, and the client's own. */
export type OpenEnvErrorCode =
  // Sent by the server.
  | 'CAPACITY_REACHED'
  | 'INVALID_JSON'
  | 'UNKNOWN_TYPE'
  | 'VALIDATION_ERROR'
  | 'EXECUTION_ERROR'
  | 'SESSION_ERROR'
  // Seen by the client.
  | 'CONNECT_FAILED'
  | 'CONNECTION_LOST'
  | 'TIMEOUT'
  | 'MALFORMED_REPLY'
  | 'MCP_ERROR'
  | 'HTTP_ERROR';

const SERVER_CODES: readonly string[] = ['CAPACITY_REACHED', 'INVALID_JSON', 'UNKNOWN_TYPE', 'VALIDATION_ERROR', 'EXECUTION_ERROR', 'SESSION_ERROR'];

/** A failed exchange with an OpenEnv server: `code` for programs, `message` for people. */
export class OpenEnvError extends Error {
  override name = 'OpenEnvError';
  constructor(
    readonly code: OpenEnvErrorCode,
    message: string,
    /** The server's own words, where it sent any. */
    readonly serverMessage: string | null = null,
  ) {
    super(message);
  }
}

/** What the person can do about each server code (appended to the server's sentence). */
const ADVICE: Record<string, string> = {
  CAPACITY_REACHED: 'the server holds as many sessions as it allows: close other clients, use fewer rollout workers or a smaller group, or start it with more room (npm run serve -- --max-sessions N)',
  INVALID_JSON: 'the server could not parse what the client sent',
  UNKNOWN_TYPE: 'the server does not know this message type (is it an OpenEnv server?)',
  VALIDATION_ERROR: 'the server refused the request: the action or reset fields do not fit its schema',
  EXECUTION_ERROR: 'the env failed on the server',
  SESSION_ERROR: 'the session is gone on the server (closed, timed out, or never reset)',
};

/** The error for a server's `{"type": "error", "data": {message, code}}` (an unknown code counts as EXECUTION_ERROR). */
export function serverError(url: string, code: unknown, message: unknown): OpenEnvError {
  const c = (typeof code === 'string' && SERVER_CODES.includes(code) ? code : 'EXECUTION_ERROR') as OpenEnvErrorCode;
  const said = typeof message === 'string' && message.length > 0 ? message : '(no message)';
  return new OpenEnvError(c, `${url}: ${ADVICE[c]} (${c}: ${said})`, said);
}

/** The code an HTTP status means in OpenEnv's terms (429 is the HTTP face of CAPACITY_REACHED). */
export function codeOfStatus(status: number): OpenEnvErrorCode {
  if (status === 429 || status === 503) return 'CAPACITY_REACHED';
  if (status === 422 || status === 400) return 'VALIDATION_ERROR';
  if (status === 404 || status === 409) return 'SESSION_ERROR';
  if (status === 408) return 'TIMEOUT';
  if (status >= 500) return 'EXECUTION_ERROR';
  return 'HTTP_ERROR';
}

/** The error for a non-2xx HTTP reply; `detail` is FastAPI's (a sentence or a list of field errors). */
export function httpError(url: string, route: string, status: number, detail: unknown): OpenEnvError {
  const said = typeof detail === 'string' ? detail : Array.isArray(detail) ? detail.map((d) => (typeof d === 'object' && d !== null ? `${((d as { loc?: unknown[] }).loc ?? []).join('.')}: ${(d as { msg?: string }).msg ?? ''}` : String(d))).join('; ') : JSON.stringify(detail ?? null);
  const code = codeOfStatus(status);
  const why = ADVICE[code] ?? (code === 'TIMEOUT' ? 'the server gave up waiting for the request' : 'the server refused the request');
  return new OpenEnvError(code, `${url}${route}: HTTP ${status}: ${why} (${said})`, said);
}
