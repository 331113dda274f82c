/**
 * Imported (for its effect) by the Node entry points that make code envs: the CLI's train,
 * serve and check-env, and the Node rollout worker. Grid code envs then run in the V8 sandbox
 * (nodeVm.ts), and CODE_ENV_CALL_TIMEOUT_MS (contract.ts, CALL_TIMEOUT_ENV), when set, is every
 * sandbox's deadline for one call in this process and its workers (they inherit the variable).
 */
import { CALL_TIMEOUT_ENV } from '../../core/envs/code/contract.ts';
import { setCodeEnvDefaults, useFastCodeEnvEngine } from './index.ts';
import { nodeVmEngine } from './nodeVm.ts';

/** Largest deadline the variable may set, ms (a stuck step holds its rollout this long). */
const MAX_CALL_TIMEOUT_MS = 600_000;

/** The deadline CODE_ENV_CALL_TIMEOUT_MS asks for, or undefined when unset; throws a clear message when it is not a whole number of ms in 1..600000. */
export function callTimeoutFromEnv(value: string | undefined = process.env[CALL_TIMEOUT_ENV]): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 1 || ms > MAX_CALL_TIMEOUT_MS) throw new Error(`${CALL_TIMEOUT_ENV}=${value}: the code env sandbox's deadline for one call must be a whole number of milliseconds from 1 to ${MAX_CALL_TIMEOUT_MS} (default 1000)`);
  return ms;
}

const ms = callTimeoutFromEnv();
if (ms !== undefined) setCodeEnvDefaults({ callTimeoutMs: ms });
useFastCodeEnvEngine(nodeVmEngine);
