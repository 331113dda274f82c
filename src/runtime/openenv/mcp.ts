/**
 * OpenEnv's MCP face: JSON-RPC 2.0 over POST /mcp or the WebSocket's `mcp` message. The methods
 * OpenEnv serves: `tools/list`, `tools/call`, and its session extension `openenv/session/create`
 * and `openenv/session/close` (a session id then rides in `params.session_id`).
 *
 * Tool schemas arrive as `inputSchema` (the MCP spec's name) or `input_schema` (Python servers
 * that dump their models without aliases); both are read.
 */
import { OpenEnvError } from './errors.ts';

/** Sends one JSON-RPC request and resolves with the raw response object. */
export type McpTransport = (msg: Record<string, unknown>, timeoutMs: number) => Promise<unknown>;

/** One tool as tools/list describes it. */
export interface McpTool {
  name: string;
  description: string;
  /** JSON Schema of its arguments (`{type: 'object', properties, required}`); `{}` when the server gave none. */
  inputSchema: Record<string, unknown>;
}

/** A tools/call result: the text of its content, and whether the tool reported an error. */
export interface McpCallResult {
  text: string;
  isError: boolean;
  /** The `result` object as the server sent it. */
  raw: unknown;
}

export class McpClient {
  private nextId = 1;
  /** The session `openenv/session/create` gave (sent with each later call), or null. */
  sessionId: string | null = null;

  constructor(
    private readonly send: McpTransport,
    private readonly timeoutMs: number,
  ) {}

  /** One JSON-RPC call; a JSON-RPC error becomes an MCP_ERROR with the server's message and code. */
  async request(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++;
    const withSession = this.sessionId !== null && !('session_id' in params) ? { ...params, session_id: this.sessionId } : params;
    const reply = await this.send({ jsonrpc: '2.0', id, method, params: withSession }, this.timeoutMs);
    if (typeof reply !== 'object' || reply === null) throw new OpenEnvError('MALFORMED_REPLY', `MCP ${method}: the reply is not a JSON-RPC object: ${JSON.stringify(reply)?.slice(0, 80)}`);
    const r = reply as { jsonrpc?: unknown; id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown } };
    if (r.jsonrpc !== '2.0' || (r.result === undefined && r.error === undefined)) throw new OpenEnvError('MALFORMED_REPLY', `MCP ${method}: expected {"jsonrpc": "2.0", "result" | "error"}, got ${JSON.stringify(reply).slice(0, 120)}`);
    if (r.id !== undefined && r.id !== null && r.id !== id) throw new OpenEnvError('MALFORMED_REPLY', `MCP ${method}: the reply answers request ${JSON.stringify(r.id)}, not ${id}`);
    if (r.error !== undefined) {
      const msg = typeof r.error?.message === 'string' ? r.error.message : JSON.stringify(r.error);
      const code = typeof r.error?.code === 'number' ? r.error.code : null;
      const what = code === -32601 ? 'the server has no such method' : code === -32602 ? 'the arguments do not fit' : 'the server refused it';
      throw new OpenEnvError('MCP_ERROR', `MCP ${method}: ${what} (JSON-RPC ${code ?? '?'}: ${msg})`, msg);
    }
    return r.result;
  }

  /** The server's tools. */
  async listTools(): Promise<McpTool[]> {
    const result = (await this.request('tools/list')) as { tools?: unknown } | null;
    if (!result || !Array.isArray(result.tools)) throw new OpenEnvError('MALFORMED_REPLY', `MCP tools/list: expected {tools: [...]}, got ${JSON.stringify(result)?.slice(0, 120)}`);
    return result.tools.map((t: unknown, i) => {
      const o = (t ?? {}) as Record<string, unknown>;
      if (typeof o.name !== 'string' || o.name === '') throw new OpenEnvError('MALFORMED_REPLY', `MCP tools/list: tool ${i} has no name`);
      const schema = o.inputSchema ?? o.input_schema ?? {};
      return { name: o.name, description: typeof o.description === 'string' ? o.description : '', inputSchema: typeof schema === 'object' && schema !== null ? (schema as Record<string, unknown>) : {} };
    });
  }

  /** Calls a tool; a tool's own failure (`isError`) is a result, not an exception. */
  async callTool(name: string, args: Record<string, unknown>): Promise<McpCallResult> {
    const result = await this.request('tools/call', { name, arguments: args });
    return { text: resultText(result), isError: typeof result === 'object' && result !== null && (result as { isError?: unknown }).isError === true, raw: result };
  }

  /** Opens an OpenEnv MCP session (its id is sent with every later call). */
  async createSession(): Promise<string> {
    const result = (await this.request('openenv/session/create')) as { session_id?: unknown } | null;
    if (typeof result?.session_id !== 'string') throw new OpenEnvError('MALFORMED_REPLY', `MCP openenv/session/create: no session_id in ${JSON.stringify(result)?.slice(0, 80)}`);
    this.sessionId = result.session_id;
    return this.sessionId;
  }

  /** Closes the session `createSession` opened. */
  async closeSession(): Promise<void> {
    if (this.sessionId === null) return;
    const id = this.sessionId;
    this.sessionId = null;
    await this.request('openenv/session/close', { session_id: id });
  }
}

/**
 * The text of a tools/call result: MCP's `content` list (its text items joined by newlines), or
 * FastMCP's `data` / `structured_content`, or the result itself when it is a plain value.
 */
export function resultText(result: unknown): string {
  if (typeof result === 'string') return result;
  if (typeof result === 'number' || typeof result === 'boolean') return String(result);
  if (typeof result !== 'object' || result === null) return '';
  const r = result as { content?: unknown; data?: unknown; structured_content?: unknown; structuredContent?: unknown };
  if (Array.isArray(r.content)) {
    const texts = r.content.filter((c): c is { text: string } => typeof c === 'object' && c !== null && typeof (c as { text?: unknown }).text === 'string').map((c) => c.text);
    if (texts.length > 0) return texts.join('\n');
  }
  for (const v of [r.data, r.structured_content, r.structuredContent]) {
    if (v === undefined || v === null) continue;
    if (typeof v === 'string') return v;
    const inner = (v as { result?: unknown }).result;
    return typeof inner === 'string' || typeof inner === 'number' ? String(inner) : JSON.stringify(v);
  }
  return JSON.stringify(result);
}
