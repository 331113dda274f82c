/**
 * Build step: writes `file.br` (Brotli, quality 11) and `file.gz` (gzip -9) beside every asset of
 * the build worth compressing, so a host can send them as they are (see docs/hosting.md) instead
 * of compressing on every request, or not at all. onnxruntime's plain WASM build (14.2 MB) goes
 * over the wire as 2.4 MB of Brotli or 3.7 MB of gzip.
 *
 * Brotli at quality 11 takes about a minute for the 14 MB WASM file on a 2-core machine, so each
 * result is kept in a cache keyed by the content's SHA-256 (node_modules/.cache/precompress):
 * ONNX Runtime's files change only with its version, and a rebuild compresses only what changed.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Plugin } from 'vite';

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);

/** File types that compress (text, WebAssembly, ONNX weights); images and fonts are compressed already. */
export const COMPRESSIBLE = new Set(['.js', '.mjs', '.css', '.html', '.json', '.svg', '.txt', '.wasm', '.onnx', '.map']);

/** Smaller files gain less than the bytes a Content-Encoding header costs. */
export const MIN_BYTES = 1024;

export interface PrecompressOptions {
  /** Where compressed results are kept between builds; null: no cache. */
  cacheDir?: string | null;
  /** Brotli quality 0–11 (default 11). */
  brotliQuality?: number;
  /** Skip source maps (default true: students never download them). */
  skipMaps?: boolean;
}

export interface Precompressed {
  file: string;
  bytes: number;
  br: number | null;
  gz: number | null;
}

async function* walk(dir: string): AsyncGenerator<string> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* walk(p);
    else if (e.isFile()) yield p;
  }
}

async function cached(cacheDir: string | null, key: string, make: () => Promise<Buffer>): Promise<Buffer> {
  if (!cacheDir) return make();
  const path = join(cacheDir, key);
  try {
    return await readFile(path);
  } catch {
    const out = await make();
    // Written under a temporary name first: two builds at once never read a half-written file.
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, out);
    await rename(tmp, path);
    return out;
  }
}

/**
 * Compresses every eligible file under `dir` (not `.br`/`.gz` files themselves). A variant is
 * written only when it saves at least 5 % of the file; the result lists what was written.
 */
export async function precompressDir(dir: string, options: PrecompressOptions = {}): Promise<Precompressed[]> {
  const quality = options.brotliQuality ?? 11;
  const cacheDir = options.cacheDir ?? null;
  if (cacheDir && !existsSync(cacheDir)) mkdirSync(cacheDir, { recursive: true });
  const files: string[] = [];
  for await (const f of walk(dir)) {
    const ext = extname(f);
    if (!COMPRESSIBLE.has(ext) || (ext === '.map' && options.skipMaps !== false)) continue;
    if ((await stat(f)).size < MIN_BYTES) continue;
    files.push(f);
  }
  // Largest first: the long Brotli jobs start at once and the thread pool stays busy.
  const sizes = new Map(await Promise.all(files.map(async (f) => [f, (await stat(f)).size] as const)));
  files.sort((a, b) => sizes.get(b)! - sizes.get(a)!);
  return Promise.all(
    files.map(async (file): Promise<Precompressed> => {
      const data = await readFile(file);
      const hash = createHash('sha256').update(data).digest('hex');
      const [br, gzipped] = await Promise.all([
        cached(cacheDir, `${hash}.q${quality}.br`, () =>
          brotli(data, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: quality,
              [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
              [constants.BROTLI_PARAM_MODE]: extname(file) === '.wasm' || extname(file) === '.onnx' ? constants.BROTLI_MODE_GENERIC : constants.BROTLI_MODE_TEXT,
            },
          }),
        ),
        cached(cacheDir, `${hash}.9.gz`, () => gz(data, { level: 9 })),
      ]);
      const worth = (b: Buffer) => b.length <= data.length * 0.95;
      if (worth(br)) await writeFile(`${file}.br`, br);
      if (worth(gzipped)) await writeFile(`${file}.gz`, gzipped);
      return { file, bytes: data.length, br: worth(br) ? br.length : null, gz: worth(gzipped) ? gzipped.length : null };
    }),
  );
}

/** The Vite plugin: precompresses the build output once it is written (`vite build` only). */
export function precompress(options: PrecompressOptions = {}): Plugin {
  let outDir = 'dist';
  let root = process.cwd();
  return {
    name: 'arl:precompress',
    apply: 'build',
    configResolved(config) {
      root = config.root;
      outDir = config.build.outDir;
    },
    async closeBundle() {
      const dir = join(root, outDir);
      if (!existsSync(dir)) return;
      const t0 = Date.now();
      // PRECOMPRESS_BROTLI_QUALITY (0-11) trades size for build time: the test build uses 5
      // (onnxruntime's WASM: 2.8 MB in ~2 s, against 2.4 MB in over a minute at 11).
      const envQuality = Number(process.env.PRECOMPRESS_BROTLI_QUALITY);
      const brotliQuality = Number.isInteger(envQuality) && envQuality >= 0 && envQuality <= 11 ? envQuality : undefined;
      const done = await precompressDir(dir, { cacheDir: join(root, 'node_modules/.cache/precompress'), ...(brotliQuality !== undefined ? { brotliQuality } : {}), ...options });
      const total = (k: 'bytes' | 'br' | 'gz') => done.reduce((a, d) => a + (d[k] ?? d.bytes), 0);
      this.info?.(`precompressed ${done.length} files in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${(total('bytes') / 1e6).toFixed(1)} MB -> ${(total('br') / 1e6).toFixed(1)} MB br, ${(total('gz') / 1e6).toFixed(1)} MB gzip`);
    },
  };
}
