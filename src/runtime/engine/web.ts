/**
 * Engines for browsers and workers. WebGPU uses onnxruntime-web's native WebGPU EP
 * (`onnxruntime-web/webgpu`), with parameters, Adam moments and KV caches kept as GPU buffers
 * between runs; WASM uses the plain build, multi-threaded when the page is cross-origin isolated.
 * Both modules are imported lazily, so a page pays only for the backend it uses.
 */
import type { Engine } from '../../core/trainer/engine.ts';
import type { OrtModule } from '../ort/session.ts';
import { ortEngine } from './ortEngine.ts';

export type WebBackend = 'webgpu' | 'wasm';

type OrtWeb = typeof import('onnxruntime-web');

export interface WebEngineOptions {
  /** WASM threads; default: ORT's own choice (needs cross-origin isolation for > 1). */
  threads?: number;
  /** ORT log severity for new sessions: 0 verbose … 4 fatal. Default 3 (errors). */
  logSeverityLevel?: 0 | 1 | 2 | 3 | 4;
}

/** The onnxruntime-web module for a backend (the WebGPU build also runs the WASM EP). */
export async function loadWebOrt(kind: WebBackend): Promise<OrtWeb> {
  return kind === 'webgpu' ? ((await import('onnxruntime-web/webgpu')) as unknown as OrtWeb) : await import('onnxruntime-web');
}

export async function loadWebEngine(kind: WebBackend, options: WebEngineOptions = {}): Promise<Engine> {
  const ort = await loadWebOrt(kind);
  if (options.threads !== undefined) ort.env.wasm.numThreads = options.threads;
  const logSeverityLevel = options.logSeverityLevel ?? 3;
  if (kind === 'webgpu') {
    return ortEngine(ort as unknown as OrtModule, 'ort-web-webgpu', {
      sessionOptions: { executionProviders: ['webgpu'], logSeverityLevel },
      stateLocation: 'gpu-buffer',
    });
  }
  return ortEngine(ort as unknown as OrtModule, 'ort-web-wasm', { sessionOptions: { executionProviders: ['wasm'], logSeverityLevel } });
}
