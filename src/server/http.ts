/**
 * The small HTTP pieces the server's routes share: JSON replies, a size-capped body read, and
 * JSON and session-id parsing with clear messages.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { WireError, toJson } from './wire.ts';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function readBody(req: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > max) {
      reject(new WireError(413, `request body of ${declared} bytes is over the ${max}-byte limit`));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        // Stop reading but keep the socket, so the 413 reply is written; the reply closes the
        // connection (a body of unknown length cannot be skipped to reach the next request).
        req.removeAllListeners('data');
        req.pause();
        reject(new WireError(413, `request body is over the ${max}-byte limit`, undefined, true));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Parses a JSON body; malformed JSON is FastAPI's 422 `json_invalid`. Empty text gives `undefined`. */
export function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new WireError(422, [{ type: 'json_invalid', loc: ['body'], msg: `JSON decode error: ${(e as Error).message}` }], 'INVALID_JSON');
  }
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function readSessionId(value: unknown, loc: (string | number)[]): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > 255) {
    throw new WireError(422, [{ type: 'string_type', loc, msg: 'session_id must be a non-empty string of at most 255 characters', input: toJson(value) }], 'VALIDATION_ERROR');
  }
  return value;
}
