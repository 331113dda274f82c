/**
 * Imported (for its effect) by the Node entry points that make code envs: the CLI's train and
 * serve, and the Node rollout worker. Grid code envs then run in the V8 sandbox (nodeVm.ts).
 */
import { useFastCodeEnvEngine } from './index.ts';
import { nodeVmEngine } from './nodeVm.ts';

useFastCodeEnvEngine(nodeVmEngine);
