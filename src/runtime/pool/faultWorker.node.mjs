// Bootstrap of the fault-injecting rollout worker used by pool.test.ts (see faultWorker.node.ts).
import { tsImport } from 'tsx/esm/api';

await tsImport('./faultWorker.node.ts', import.meta.url);
