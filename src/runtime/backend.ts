/**
 * Which execution backend a policy will run on in this browser (or worker), and why.
 * Order of preference (DESIGN §4): native WebGPU when an adapter exists; otherwise WASM,
 * multi-threaded when the page is cross-origin isolated (SharedArrayBuffer available).
 */

export type BackendKind = 'webgpu' | 'wasm';

export interface BackendReport {
  /** What the session layer will use. */
  chosen: BackendKind;
  webgpu: {
    /** navigator.gpu exists. */
    api: boolean;
    /** An adapter was granted. */
    adapter: boolean;
    /** Software adapter (SwiftShader): correct but slow. */
    isFallbackAdapter: boolean;
    vendor: string;
    architecture: string;
    description: string;
    /** Why WebGPU is not chosen, when it is not. */
    reason?: string;
  };
  wasm: {
    /** crossOriginIsolated: SharedArrayBuffer and WASM threads are allowed. */
    crossOriginIsolated: boolean;
    /** Threads the WASM backend will use (1 when not isolated). */
    threads: number;
    simd: boolean;
  };
  /** Hardware threads reported by the browser. */
  hardwareConcurrency: number;
}

export interface DetectOptions {
  /** Force a backend (e.g. from the URL `?backend=wasm`), skipping WebGPU when 'wasm'. */
  force?: BackendKind;
}

/** WASM SIMD feature test: a tiny module using v128 (the canonical wasm-feature-detect bytes). */
function wasmSimd(): boolean {
  try {
    return WebAssembly.validate(
      new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]),
    );
  } catch {
    return false;
  }
}

export async function detectBackend(options: DetectOptions = {}): Promise<BackendReport> {
  const g = globalThis as unknown as {
    navigator?: { gpu?: { requestAdapter(): Promise<GPUAdapterLike | null> }; hardwareConcurrency?: number };
    crossOriginIsolated?: boolean;
  };
  const nav = g.navigator;
  const hardwareConcurrency = nav?.hardwareConcurrency ?? 1;
  const isolated = g.crossOriginIsolated === true;
  const webgpu: BackendReport['webgpu'] = {
    api: !!nav?.gpu,
    adapter: false,
    isFallbackAdapter: false,
    vendor: '',
    architecture: '',
    description: '',
  };
  if (nav?.gpu) {
    try {
      const adapter = await nav.gpu.requestAdapter();
      if (adapter) {
        webgpu.adapter = true;
        const info = adapter.info ?? {};
        // `isFallbackAdapter` moved from the adapter onto GPUAdapterInfo in newer Chromium.
        webgpu.isFallbackAdapter = Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter);
        webgpu.vendor = info.vendor ?? '';
        webgpu.architecture = info.architecture ?? '';
        webgpu.description = info.description ?? '';
      } else webgpu.reason = 'the browser has WebGPU but granted no adapter';
    } catch (e) {
      webgpu.reason = `requesting a WebGPU adapter failed: ${(e as Error).message}`;
    }
  } else webgpu.reason = 'this browser has no WebGPU (navigator.gpu is missing)';

  let chosen: BackendKind = webgpu.adapter ? 'webgpu' : 'wasm';
  if (options.force === 'wasm' && chosen === 'webgpu') {
    chosen = 'wasm';
    webgpu.reason = 'WASM was forced (backend=wasm)';
  } else if (options.force === 'webgpu' && !webgpu.adapter) {
    webgpu.reason = `WebGPU was asked for but is unavailable: ${webgpu.reason ?? 'no adapter'}`;
  }
  // ORT's WASM backend uses up to min(4, cores/2) threads by default; we cap it the same way.
  const threads = isolated ? Math.max(1, Math.min(4, Math.floor(hardwareConcurrency / 2))) : 1;
  return {
    chosen,
    webgpu,
    wasm: { crossOriginIsolated: isolated, threads, simd: wasmSimd() },
    hardwareConcurrency,
  };
}

interface GPUAdapterLike {
  isFallbackAdapter?: boolean;
  info?: { vendor?: string; architecture?: string; description?: string; isFallbackAdapter?: boolean };
}

/** One line for a status bar, e.g. "WebGPU (software adapter: swiftshader)" or "WASM, 4 threads". */
export function describeBackend(r: BackendReport): string {
  if (r.chosen === 'webgpu') {
    const name = [r.webgpu.vendor, r.webgpu.architecture].filter(Boolean).join(' ') || 'adapter';
    return `WebGPU (${r.webgpu.isFallbackAdapter ? 'software adapter: ' : ''}${name})`;
  }
  const t = r.wasm.threads > 1 ? `${r.wasm.threads} threads` : 'single thread';
  const why = r.wasm.crossOriginIsolated ? '' : ', not cross-origin isolated';
  return `WASM (${t}${r.wasm.simd ? ', SIMD' : ''}${why})`;
}
