/** Code envs: environments written as JavaScript modules (contract.ts), run in a sandbox the runtime installs. */
export { CODE_ENV_ID, CodeEnv, installCodeEnvEngine, codeEnvEngineLoaded, makeCodeEnv, registerCodeEnv } from './codeEnv.ts';
export type { CodeEnvEngine, CodeEnvGuest, CodeEnvInstance } from './codeEnv.ts';
export { CodeEnvError, MAX_CODE_CHARS, exportLine, parseMeta } from './contract.ts';
export type { CodeEnvMeta } from './contract.ts';
export { checkCodeEnv } from './checkCodeEnv.ts';
export type { CodeEnvCheck, CodeEnvProblem, CodeEnvRule } from './checkCodeEnv.ts';
export { resetEnvs, stepEnvs } from './stepMany.ts';
export type { CodeEnvBatch, FastCodeEnvEngine } from './codeEnv.ts';
