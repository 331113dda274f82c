/** Importing this module registers every built-in env. */
import './grid/index.ts';
import './tools/index.ts';
import './remote/index.ts';

export { makeEnv, envIds, envSpecs, registerEnv } from './registry.ts';
export type { EnvKwargs } from './registry.ts';
export * from './types.ts';
