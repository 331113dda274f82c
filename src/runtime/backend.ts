/**
 * What this browser offers to run policies on: a WebGPU adapter (and whether it is a software
 * one), WASM threads (cross-origin isolation), SIMD. Which backend a run uses is not decided
 * here: an adapter's presence says nothing about speed, so unless the person forces one
 * (`?backend=`), the run's own model is timed on each (core/engine) when it starts.
 */
import { learnerThreads } from '../core/engine/threads.ts';

export type BackendKind = 'webgpu' | 'wasm';

export interface BackendReport {
  /** The forced backend, or 'auto' (measured per model when a run starts). */
  chosen: BackendKind | 'auto';
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
    /** Threads a WASM learner uses when its rollouts run in its own thread (1 when not isolated). */
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
    isSecureContext?: boolean;
    location?: { protocol?: string; hostname?: string };
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
  } else webgpu.reason = noGpuReason(g.isSecureContext !== false, g.location?.protocol ?? '', g.location?.hostname ?? '');

  let chosen: BackendReport['chosen'] = 'auto';
  if (options.force === 'wasm') {
    chosen = 'wasm';
    if (webgpu.adapter) webgpu.reason = 'WASM was forced (backend=wasm)';
  } else if (options.force === 'webgpu') {
    if (webgpu.adapter) chosen = 'webgpu';
    else {
      chosen = 'wasm';
      webgpu.reason = `WebGPU was asked for but is unavailable: ${webgpu.reason ?? 'no adapter'}`;
    }
  } else if (!webgpu.adapter) chosen = 'wasm';
  const threads = learnerThreads({ cores: hardwareConcurrency, isolated, rolloutWorkers: 0 });
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

function describeWebgpu(r: BackendReport): string {
  const name = [r.webgpu.vendor, r.webgpu.architecture].filter(Boolean).join(' ') || 'adapter';
  return `WebGPU (${r.webgpu.isFallbackAdapter ? 'software adapter: ' : ''}${name})`;
}

function describeWasm(r: BackendReport): string {
  const t = r.wasm.threads > 1 ? `${r.wasm.threads} threads` : 'single thread';
  const why = r.wasm.crossOriginIsolated ? '' : ', not cross-origin isolated';
  return `WASM (${t}${r.wasm.simd ? ', SIMD' : ''}${why})`;
}

/**
 * One line for a status bar before any measurement: "WASM (2 threads, SIMD)", "WebGPU (…)" when
 * forced, or "Auto: WASM (…) or WebGPU (…), measured at Start".
 */
export function describeBackend(r: BackendReport): string {
  if (r.chosen === 'webgpu') return describeWebgpu(r);
  if (r.chosen === 'wasm') return describeWasm(r);
  return `Auto: ${describeWasm(r)} or ${describeWebgpu(r)}, timed at Start`;
}

/**
 * Names this device for remembering measured choices: the browser and its version, the WebGPU
 * adapter, the cores and whether threads are allowed. A change in any of them re-measures.
 */
export function deviceKey(r: BackendReport, userAgent: string): string {
  const g = r.webgpu;
  const adapter = g.adapter ? `${g.vendor}/${g.architecture}/${g.description}${g.isFallbackAdapter ? '/software' : ''}` : 'no-adapter';
  return `${userAgent} | ${adapter} | cores ${r.hardwareConcurrency} | ${r.wasm.crossOriginIsolated ? 'isolated' : 'not isolated'}`;
}

/** localhost names browsers treat as a secure context even over plain HTTP. */
export function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '[::1]' || hostname === '::1' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** Why a page that is not a secure context has no WebGPU and no threads, and what the host does about it. */
export function insecureContextText(protocol: string, hostname: string): string {
  const where = protocol === 'http:' ? (isLoopback(hostname) ? 'http' : 'http on a LAN address') : `${protocol.replace(/:$/, '') || 'unknown'} address`;
  return `this page is not a secure context (${where}): browsers withhold WebGPU and threads; serve it over HTTPS or from localhost`;
}

/**
 * Why navigator.gpu is missing: browsers hide it outside a secure context (a LAN address over
 * plain HTTP), which is the host's to fix, not the browser's; only in a secure context is it the browser.
 */
export function noGpuReason(secure: boolean, protocol: string, hostname: string): string {
  return secure ? 'this browser has no WebGPU (navigator.gpu is missing)' : insecureContextText(protocol, hostname);
}
