/**
 * `npm run train -- --env-url ws://HOST:PORT`: points a remote preset (env `remote/openenv`) at a
 * server, and starts the network thread its env sessions block on. Node's network thread is a
 * worker_thread (src/runtime/envLinks.node.ts).
 */
import { ensureEnvLink } from '../runtime/envLinks.node.ts';
import { familyOfEnvId } from '../core/envs/families.ts';
import { readRemoteKwargs, REMOTE_ENV_ID } from '../core/envs/remote/index.ts';
import type { RunConfig } from '../core/presets/schema.ts';
import { UsageError } from './args.ts';

/** The help line of --env-url. */
export const ENV_URL_USAGE = `  --env-url URL     the OpenEnv server a remote preset (env ${REMOTE_ENV_ID}) trains against, e.g. ws://127.0.0.1:8000 (what npm run serve prints); replaces env.kwargs.url`;

/** Whether `id` is played over the network (it can fail in any iteration: a run keeps its last good checkpoint). */
export function isRemoteEnv(id: string): boolean {
  return familyOfEnvId(id)?.overNetwork === true;
}

/** `config` with `--env-url` applied (a copy), after checking it; starts the network thread when the run is remote. */
export async function withEnvUrl(config: RunConfig, url: string | undefined): Promise<RunConfig> {
  let out = config;
  if (url !== undefined) {
    if (config.env.id !== REMOTE_ENV_ID) throw new UsageError(`--env-url points a remote preset at a server; ${config.id} trains on ${config.env.id}, which runs here (use a preset whose env is ${REMOTE_ENV_ID}, e.g. calc-remote-grpo)`);
    const kwargs = { ...config.env.kwargs, url };
    try {
      readRemoteKwargs(kwargs);
    } catch (e) {
      throw new UsageError(`--env-url: ${(e as Error).message}`);
    }
    out = { ...config, env: { ...config.env, kwargs } };
  }
  await ensureEnvLink(out.env.id);
  return out;
}
