// Bootstrap of a node:worker_threads rollout worker: registers tsx's loader in this thread and
// loads the TypeScript entry. (Node 20 does not apply `--import tsx` from a worker's execArgv.)
import { tsImport } from 'tsx/esm/api';

await tsImport('./worker.node.ts', import.meta.url);
