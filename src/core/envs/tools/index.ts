/** Registers the mock tool-API envs (one file each; shared machinery in base.ts). */
import { registerEnv } from '../registry.ts';
import { CALCULATOR_DEFAULTS, CALCULATOR_ID, makeCalculator } from './calculator.ts';
import { KV_LOOKUP_DEFAULTS, KV_LOOKUP_ID, makeKvLookup } from './kvLookup.ts';
import { FLAKY_API_DEFAULTS, FLAKY_API_ID, makeFlakyApi } from './flakyApi.ts';
import { MEMORY_DEFAULTS, MEMORY_ID, makeMemory } from './memory.ts';

registerEnv(CALCULATOR_ID, makeCalculator, { ...CALCULATOR_DEFAULTS });
registerEnv(KV_LOOKUP_ID, makeKvLookup, { ...KV_LOOKUP_DEFAULTS });
registerEnv(FLAKY_API_ID, makeFlakyApi, { ...FLAKY_API_DEFAULTS });
registerEnv(MEMORY_ID, makeMemory, { ...MEMORY_DEFAULTS });

export { CalculatorEnv, makeCalculator, CALCULATOR_DEFAULTS } from './calculator.ts';
export type { CalculatorConfig } from './calculator.ts';
export { KvLookupEnv, makeKvLookup, KV_LOOKUP_DEFAULTS, generateKnowledgeBase } from './kvLookup.ts';
export type { KvLookupConfig, KnowledgeBase } from './kvLookup.ts';
export { FlakyApiEnv, makeFlakyApi, FLAKY_API_DEFAULTS } from './flakyApi.ts';
export type { FlakyApiConfig } from './flakyApi.ts';
export { MemoryEnv, makeMemory, MEMORY_DEFAULTS } from './memory.ts';
export type { MemoryConfig } from './memory.ts';
export { parseCall, ToolEnvBase, ACTION_MAX_LENGTH, OBS_MAX_LENGTH } from './base.ts';
export type { ToolCall, ToolDef, Outcome } from './base.ts';
export { parseExpr, evaluate, calculate } from './arith.ts';
export { stepTimed } from './timed.ts';
