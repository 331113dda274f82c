/**
 * npm run serve -- --env <id|all> | --env-file <map.json> [--port N] [--host H] [--latency real|skip] [--latency-cap-ms N] [--max-sessions N] [--max-sessions-per-client N] [--idle-timeout S] [--request-timeout S] [--seed N] [--verl-actions last-call|strict] [--ws-stall S] [--reward-file FILE]
 *
 * Serves registered envs to external trainers: OpenEnv's HTTP/WebSocket protocol for every env,
 * verl-tool's `POST /get_observation` for the tool envs (see src/server/server.ts for routes).
 * One env is served at the root; `--env all` (or a comma-separated list) puts each under `/<id>`.
 * Runs until interrupted.
 */
import { envIds } from '../core/envs/index.ts';
import { startServer, SERVE_DEFAULTS } from '../server/server.ts';
import { intArg, parseCli, runWhenScript, UsageError } from './args.ts';
import { loadEnvFile, registerEnvFile } from './envFile.ts';
import { scorerFromFile } from './serveScore.ts';

const USAGE = `usage: npm run serve -- --env <id | id,id,... | all> | --env-file <map.json | env.js> [--port N] [--host H] [--latency real|skip] [--latency-cap-ms N] [--max-sessions N] [--max-sessions-per-client N] [--idle-timeout S] [--request-timeout S] [--seed N] [--verl-actions last-call|strict] [--ws-stall S] [--reward-file FILE]
  --env             env id to serve at the root, or several / all, each under /<env id>
  --env-file        an env from a file, checked first: a map drawn in the studio (.json), served as file/<file name>, or a code env (.js, examples/envs/), served as code/<file name>; alone, at the root; with --env, beside those envs, each under /<env id>
  --port            TCP port (default ${SERVE_DEFAULTS.port}; 0 = any free port)
  --host            interface (default ${SERVE_DEFAULTS.host}, loopback only)
  --latency         real: wait out each tool call's simulated latency before replying; skip: reply at once (default real)
  --latency-cap-ms  with real latency, the longest one step waits (default ${SERVE_DEFAULTS.latencyCapMs}; the drawn value is still reported)
  --max-sessions    live sessions at most, all protocols together (default ${SERVE_DEFAULTS.maxSessions})
  --max-sessions-per-client  live sessions one client (remote address) may hold, so one client cannot take every place (default: three quarters of --max-sessions; a single trainer needs at least its rollouts in flight)
  --idle-timeout    seconds before an unused session is closed, 0 = never (default ${SERVE_DEFAULTS.idleTimeoutS})
  --request-timeout seconds a client has to send a whole request once it connects or starts one; a half-sent request gets 408 and is hung up (default ${SERVE_DEFAULTS.requestTimeoutS})
  --seed            first seed given to a reset without one; later ones count up (default ${SERVE_DEFAULTS.seed})
  --verl-actions    get_observation: last-call plays the last name(...) call in the model's text, strict the text as is (default ${SERVE_DEFAULTS.verlActions})
  --ws-stall        seconds a WebSocket client may leave its replies unread once the server stopped reading from it (past ${SERVE_DEFAULTS.wsMaxPending} messages waiting or ${SERVE_DEFAULTS.wsMaxBufferedBytes >> 20} MiB of replies) before it is closed with 1008 (default ${SERVE_DEFAULTS.wsStallS})
  --reward-file     reward-lab terms (an ES module, e.g. an export's reward_terms.js) that POST /score scores finished episodes with, in the sandbox the playground trains with
envs: ${envIds().join(', ')}`;

/**
 * The env ids `--env` and `--env-file` name, the file's env registered under its own id first.
 * `all` means every built-in env (each under /<env id>).
 */
export async function envsToServe(env: string | undefined, envFile: string | undefined): Promise<{ envs: string[]; all: boolean }> {
  if (!env && !envFile) throw new UsageError(`--env or --env-file is required\n\n${USAGE}`);
  const all = env === 'all';
  const named = env === undefined ? [] : all ? envIds() : env.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = named.filter((id) => !envIds().includes(id));
  if (unknown.length > 0) throw new UsageError(`unknown env ${unknown.map((u) => JSON.stringify(u)).join(', ')}; registered envs: ${envIds().join(', ')}`);
  const file = envFile === undefined ? null : registerEnvFile(await loadEnvFile(envFile));
  return { envs: file ? [...named, file] : named, all };
}

export async function main(argv: string[]): Promise<number> {
  const { values } = parseCli(
    argv,
    {
      env: { type: 'string' },
      'env-file': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      latency: { type: 'string', default: 'real' },
      'latency-cap-ms': { type: 'string' },
      'max-sessions': { type: 'string' },
      'max-sessions-per-client': { type: 'string' },
      'idle-timeout': { type: 'string' },
      'request-timeout': { type: 'string' },
      seed: { type: 'string' },
      'verl-actions': { type: 'string', default: SERVE_DEFAULTS.verlActions },
      'ws-stall': { type: 'string' },
      'reward-file': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const { envs, all } = await envsToServe(values.env, values['env-file']);
  if (values.latency !== 'real' && values.latency !== 'skip') throw new UsageError(`--latency must be real or skip, got ${JSON.stringify(values.latency)}`);
  const verlActions = values['verl-actions'];
  if (verlActions !== 'last-call' && verlActions !== 'strict') throw new UsageError(`--verl-actions must be last-call or strict, got ${JSON.stringify(verlActions)}`);
  const score = values['reward-file'] === undefined ? null : await scorerFromFile(values['reward-file']);
  const server = await startServer({
    envs,
    prefixed: all || envs.length > 1,
    host: values.host ?? SERVE_DEFAULTS.host,
    port: intArg(values.port, 'port', 0, 65535) ?? SERVE_DEFAULTS.port,
    latency: values.latency,
    latencyCapMs: intArg(values['latency-cap-ms'], 'latency-cap-ms', 0, 600_000) ?? SERVE_DEFAULTS.latencyCapMs,
    maxSessions: intArg(values['max-sessions'], 'max-sessions', 1, 1_000_000) ?? SERVE_DEFAULTS.maxSessions,
    maxSessionsPerClient: intArg(values['max-sessions-per-client'], 'max-sessions-per-client', 1, 1_000_000) ?? null,
    idleTimeoutS: intArg(values['idle-timeout'], 'idle-timeout', 0, 86_400 * 7) ?? SERVE_DEFAULTS.idleTimeoutS,
    requestTimeoutS: intArg(values['request-timeout'], 'request-timeout', 1, 3600) ?? SERVE_DEFAULTS.requestTimeoutS,
    seed: intArg(values.seed, 'seed', 0, 2 ** 32 - 1) ?? SERVE_DEFAULTS.seed,
    verlActions,
    wsStallS: intArg(values['ws-stall'], 'ws-stall', 1, 3600) ?? SERVE_DEFAULTS.wsStallS,
    score,
  });
  const lines = Object.entries(server.prefixes).map(([id, prefix]) => `  ${id.padEnd(24)} ${server.url}${prefix}  (ws ${server.url.replace(/^http/, 'ws')}${prefix}/ws)`);
  const limits = `at most ${server.sessions.options.maxSessions} sessions, ${server.sessions.maxPerClient} per client; a request in full within ${intArg(values['request-timeout'], 'request-timeout', 1, 3600) ?? SERVE_DEFAULTS.requestTimeoutS} s`;
  console.log(`serving ${envs.length} env${envs.length > 1 ? 's' : ''} on ${server.url} (latency ${values.latency}; ${limits}):\n${lines.join('\n')}`);
  // A bug in one handler must not take every other session down with it: log and keep serving.
  process.on('uncaughtException', (e) => console.error(`serve: uncaught ${e.stack ?? e.message}`));
  process.on('unhandledRejection', (e) => console.error(`serve: unhandled rejection ${String(e)}`));
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  return 0;
}

runWhenScript(import.meta.url, main);
