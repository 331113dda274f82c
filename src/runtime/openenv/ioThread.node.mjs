// Bootstrap of the remote-env network thread on node:worker_threads: registers tsx's loader in
// this thread and loads the TypeScript entry (as src/runtime/tokenWorker/worker.node.mjs).
import { tsImport } from 'tsx/esm/api';

await tsImport('./ioThread.node.ts', import.meta.url);
