import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { precompress } from './src/build/precompress.ts';

/**
 * Cross-origin isolation lets onnxruntime-web use WASM threads (SharedArrayBuffer).
 * Any static host serving the built app should send the same two headers.
 */
const isolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

export default defineConfig({
  // Relative asset paths: the build works from any sub-path of any static host.
  base: './',
  // `.br` and `.gz` beside every large file of the build, for hosts to send as they are (README, Hosting).
  plugins: [react(), precompress()],
  server: { headers: isolation },
  preview: { headers: isolation },
  worker: { format: 'es' },
  // The QuickJS wasm variant finds its .wasm file next to its module (import.meta.url): pre-bundling would move the module away from it.
  optimizeDeps: { exclude: ['onnxruntime-web', '@jitl/quickjs-wasmfile-release-sync'] },
  build: {
    target: 'es2022',
    chunkSizeWarningLimit: 4096,
    // Two pages: the playground, and the device check a workshop host runs before a session.
    rollupOptions: { input: { main: 'index.html', check: 'check.html' } },
  },
});
