/**
 * A tiny static server for the built app, mounted under a sub-path (as a workshop host would
 * serve it) and sending the COOP/COEP headers that enable WASM threads.
 *
 * Precompressed assets: when the build wrote `file.br` / `file.gz` beside a file (vite.config.ts,
 * `precompress`) and the request's Accept-Encoding allows it, the compressed file is sent with
 * `Content-Encoding` (Brotli first), `Vary: Accept-Encoding` always, as a host should do it.
 */
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/** One answered request, for measurements (bench/tab): what was asked, what went out, when. */
export interface ServedRequest {
  path: string;
  status: number;
  /** 'br', 'gzip' or '' (sent as is). */
  encoding: string;
  acceptEncoding: string;
  /** Body bytes sent (the compressed size when precompressed). */
  bytes: number;
  /** Epoch ms when the request arrived and when its response was handed to the socket. */
  startMs: number;
  endMs: number;
  /** wireBytes() once this response was written out. */
  wireAtEnd: number;
}

export interface StaticServer {
  url: string;
  close(): Promise<void>;
  /** Bytes written to all sockets so far (status lines, headers and bodies: what went over the wire). */
  wireBytes(): number;
  /** Every request answered so far, in order (kept only when `record` was set). */
  requests: ServedRequest[];
}

export interface ServeOptions {
  /** Serve `file.br` / `file.gz` where they exist and the client accepts them (default true). */
  precompressed?: boolean;
  /** Keep a log of every request in `requests` (default false). */
  record?: boolean;
}

/** The encodings to try, best first, for an Accept-Encoding header (q=0 refuses one). */
export function acceptedEncodings(header: string | undefined): ('br' | 'gzip')[] {
  const offered = new Map<string, number>();
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((x) => x !== undefined);
    offered.set(name, q === undefined ? 1 : Number(q));
  }
  const ok = (e: string) => (offered.get(e) ?? offered.get('*') ?? 0) > 0;
  return (['br', 'gzip'] as const).filter(ok);
}

const EXT: Record<string, string> = { br: '.br', gzip: '.gz' };

export async function serveStatic(
  root: string,
  basePath = '/playground/',
  isolate = true,
  headers: Record<string, string> = {},
  options: ServeOptions = {},
): Promise<StaticServer> {
  const precompressed = options.precompressed ?? true;
  const rootAbs = resolve(root);
  const requests: ServedRequest[] = [];
  const sockets = new Set<Socket>();
  let closedBytes = 0;
  const wireBytes = () => closedBytes + [...sockets].reduce((a, s) => a + s.bytesWritten, 0);
  const server: Server = createServer(async (req, res) => {
    const startMs = Date.now();
    const url = new URL(req.url ?? '/', 'http://x');
    const acceptEncoding = String(req.headers['accept-encoding'] ?? '');
    let sent = { status: 0, encoding: '', bytes: 0 };
    const log = (status: number, encoding: string, bytes: number) => {
      sent = { status, encoding, bytes };
    };
    if (options.record) res.once('finish', () => requests.push({ path: url.pathname, ...sent, acceptEncoding, startMs, endMs: Date.now(), wireAtEnd: wireBytes() }));
    if (isolate) {
      res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
      res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
    }
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    if (!url.pathname.startsWith(basePath)) {
      log(404, '', 0);
      res.writeHead(404).end('outside the app sub-path');
      return;
    }
    let rel = decodeURIComponent(url.pathname.slice(basePath.length)) || 'index.html';
    if (rel.endsWith('/')) rel += 'index.html';
    const file = normalize(join(rootAbs, rel));
    if (!file.startsWith(rootAbs)) {
      log(403, '', 0);
      res.writeHead(403).end();
      return;
    }
    try {
      const s = await stat(file);
      if (!s.isFile()) throw new Error('not a file');
      let body: Buffer | null = null;
      let encoding = '';
      if (precompressed) {
        for (const e of acceptedEncodings(acceptEncoding)) {
          try {
            body = await readFile(file + EXT[e]);
            encoding = e;
            break;
          } catch {
            // no such variant: try the next, or send the file as is
          }
        }
      }
      // Revalidation as static hosts do it: an ETag per file version and encoding, 304 when it matches.
      const etag = `"${s.size.toString(36)}-${Math.round(s.mtimeMs).toString(36)}${encoding ? `-${encoding}` : ''}"`;
      const h: Record<string, string | number> = {
        'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
        Vary: 'Accept-Encoding',
        ETag: etag,
        // Vite names every file under assets/ by its content's hash: those never change.
        'Cache-Control': rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      };
      if (encoding) h['Content-Encoding'] = encoding;
      if (req.headers['if-none-match'] === etag) {
        log(304, encoding, 0);
        res.writeHead(304, h).end();
        return;
      }
      body ??= await readFile(file);
      h['Content-Length'] = body.length;
      res.writeHead(200, h);
      log(200, encoding, body.length);
      res.end(body);
    } catch {
      log(404, '', 0);
      res.writeHead(404).end('not found');
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => {
      closedBytes += socket.bytesWritten;
      sockets.delete(socket);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}${basePath}`,
    close: () =>
      new Promise((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
    wireBytes,
    requests,
  };
}
