import { mkdtempSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync, brotliCompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { acceptedEncodings, serveStatic } from '../../e2e/serve.ts';

function fetchRaw(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((ok, fail) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', fail);
  });
}

describe('acceptedEncodings', () => {
  it('prefers Brotli, honours q=0 and *', () => {
    expect(acceptedEncodings('gzip, deflate, br, zstd')).toEqual(['br', 'gzip']);
    expect(acceptedEncodings('gzip')).toEqual(['gzip']);
    expect(acceptedEncodings('br;q=0, gzip;q=0.5')).toEqual(['gzip']);
    expect(acceptedEncodings('*')).toEqual(['br', 'gzip']);
    expect(acceptedEncodings('*, br;q=0')).toEqual(['gzip']);
    expect(acceptedEncodings('')).toEqual([]);
    expect(acceptedEncodings(undefined)).toEqual([]);
  });
});

describe('serveStatic with precompressed files', () => {
  it('sends file.br or file.gz as the client accepts, with Vary, an ETag and 304 on a match; counts the bytes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'serve-'));
    const text = 'hello '.repeat(1000);
    writeFileSync(join(dir, 'a.js'), text);
    writeFileSync(join(dir, 'a.js.br'), brotliCompressSync(text));
    writeFileSync(join(dir, 'a.js.gz'), gzipSync(text));
    writeFileSync(join(dir, 'plain.txt'), 'plain');
    const server = await serveStatic(dir, '/app/', true, {}, { record: true });
    try {
      const br = await fetchRaw(`${server.url}a.js`, { 'Accept-Encoding': 'gzip, deflate, br' });
      expect(br.headers['content-encoding']).toBe('br');
      expect(br.headers.vary).toBe('Accept-Encoding');
      expect(br.headers['content-type']).toMatch(/javascript/);
      expect(br.body.length).toBeLessThan(text.length / 10);
      const gz = await fetchRaw(`${server.url}a.js`, { 'Accept-Encoding': 'gzip' });
      expect(gz.headers['content-encoding']).toBe('gzip');
      const none = await fetchRaw(`${server.url}a.js`);
      expect(none.headers['content-encoding']).toBeUndefined();
      expect(none.body.toString()).toBe(text);
      const plain = await fetchRaw(`${server.url}plain.txt`, { 'Accept-Encoding': 'br' });
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body.toString()).toBe('plain');
      // Revalidation: the same ETag (per encoding) answers 304 with no body.
      const again = await fetchRaw(`${server.url}a.js`, { 'Accept-Encoding': 'br', 'If-None-Match': String(br.headers.etag) });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
      expect(gz.headers.etag).not.toBe(br.headers.etag);
      expect(server.requests.map((r) => [r.status, r.encoding])).toEqual([
        [200, 'br'],
        [200, 'gzip'],
        [200, ''],
        [200, ''],
        [304, 'br'],
      ]);
      expect(server.wireBytes()).toBeGreaterThan(br.body.length + gz.body.length + text.length);
    } finally {
      await server.close();
    }
    const off = await serveStatic(dir, '/app/', true, {}, { precompressed: false });
    try {
      const r = await fetchRaw(`${off.url}a.js`, { 'Accept-Encoding': 'br' });
      expect(r.headers['content-encoding']).toBeUndefined();
    } finally {
      await off.close();
    }
  });
});
