// Bootstrap of a node:worker_threads token rollout worker: registers tsx's loader in this thread
// and loads the TypeScript entry (as src/runtime/pool/worker.node.mjs).
import { tsImport } from 'tsx/esm/api';

await tsImport('./worker.node.ts', import.meta.url);
