import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { precompressDir } from './precompress.ts';

function fixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'precompress-'));
  writeFileSync(join(dir, 'app.js'), 'export const x = 1;\n'.repeat(2000));
  writeFileSync(join(dir, 'tiny.js'), 'export {};\n');
  writeFileSync(join(dir, 'image.png'), Buffer.alloc(8000, 1));
  writeFileSync(join(dir, 'app.js.map'), '{"mappings":"' + 'AAAA;'.repeat(2000) + '"}');
  // Random bytes do not compress: no variant is worth writing.
  writeFileSync(join(dir, 'noise.wasm'), randomBytes(4096));
  return dir;
}

describe('precompressDir', () => {
  it('writes .br and .gz beside large compressible files that round-trip, and skips small files, images, maps and incompressible data', async () => {
    const dir = fixture();
    const done = await precompressDir(dir, { brotliQuality: 5, cacheDir: null });
    const original = readFileSync(join(dir, 'app.js'));
    expect(brotliDecompressSync(readFileSync(join(dir, 'app.js.br')))).toEqual(original);
    expect(gunzipSync(readFileSync(join(dir, 'app.js.gz')))).toEqual(original);
    expect(readdirSync(dir).sort()).toEqual(['app.js', 'app.js.br', 'app.js.gz', 'app.js.map', 'image.png', 'noise.wasm', 'tiny.js']);
    const app = done.find((d) => d.file.endsWith('app.js'))!;
    expect(app.br).toBeLessThan(app.bytes / 10);
    expect(done.find((d) => d.file.endsWith('noise.wasm'))).toMatchObject({ br: null, gz: null });
  });

  it('reuses cached results by content', async () => {
    const dir = fixture();
    const cacheDir = mkdtempSync(join(tmpdir(), 'precompress-cache-'));
    await precompressDir(dir, { brotliQuality: 5, cacheDir });
    const hash = createHash('sha256').update(readFileSync(join(dir, 'app.js'))).digest('hex');
    expect(readFileSync(join(cacheDir, `${hash}.q5.br`))).toEqual(readFileSync(join(dir, 'app.js.br')));
    // A cached entry is used as is: replace it and the next build writes what the cache holds.
    const marker = Buffer.from('cached');
    writeFileSync(join(cacheDir, `${hash}.q5.br`), marker);
    const again = fixture();
    await precompressDir(again, { brotliQuality: 5, cacheDir });
    expect(readFileSync(join(again, 'app.js.br'))).toEqual(marker);
    expect(existsSync(join(again, 'tiny.js.br'))).toBe(false);
  });
});
