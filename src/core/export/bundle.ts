/**
 * A run as a TRL or veRL experiment: the files of the export folder (`npm run export`, the Runs
 * view's Export button). The config under the framework's names, a launch script, the reward
 * terms as Python (translated, or scored by the env server), the env as the playground's own
 * server (`npm run serve`: OpenEnv HTTP for TRL, verl-tool's /get_observation for veRL), and a
 * README.txt that lists what did not translate.
 */
import type { RunConfig } from '../presets/schema.ts';
import type { ShapingConfig } from '../reward/shaping.ts';
import { familyOf } from '../envs/families.ts';
import { rewardVersions } from '../reward/versions.ts';
import { makeEnv } from '../envs/index.ts';
import { translateTerms, type FieldSet, type TermTranslation } from './pyTerms.ts';
import { hydraValue, trlArgs, unsupported, verlOverrides, type Mapped } from './frameworks.ts';
import { rewardTermsPy, trlScriptPy, verlTermsRewardPy, type BuiltinTerm } from './python.ts';

export type ExportTarget = 'trl' | 'verl';
export const EXPORT_TARGETS: readonly ExportTarget[] = ['trl', 'verl'];

/** What an export needs besides the run: the veRL recipe's files (examples/verl/), by name. */
export interface ExportInputs {
  config: RunConfig;
  /** The run's name (the README's title). */
  name: string;
  /** The reward module that scored the run's last iterations ('' = none). */
  rewardCode: string;
  /** How many reward-code versions the run went through (1 = the code it started with). */
  rewardVersions: number;
  /** examples/verl/{prepare_data.py, playground_reward.py, stop_tokens.txt}; only veRL exports read them. */
  verlRecipe: Readonly<Record<string, string>>;
}

export type ExportResult = { ok: true; files: Record<string, string>; notes: string[] } | { ok: false; message: string };

const STEP_FIELDS = ['t', 'action', 'actionName', 'reward', 'terminated', 'truncated', 'info.progress', 'info.success', 'info.toolCall', 'info.toolFailed', 'info.recovered', 'info.malformed', 'episode.seed', 'episode.envId', 'episode.length', 'episode.returnSoFar'];

/** Step-record fields the exported side fills: text envs add the observation texts (veRL has no task text at t = 0). */
export function availableFields(isGrid: boolean, to: ExportTarget): FieldSet {
  const text = isGrid ? [] : to === 'trl' ? ['observation.text', 'observation.nextText'] : ['observation.nextText'];
  return new Set([...STEP_FIELDS, ...text]);
}

/** The built-in shaping terms with a non-zero weight, as per-step Python (length and potential stay behind). */
export function builtinTerms(s: ShapingConfig): BuiltinTerm[] {
  const out: BuiltinTerm[] = [];
  if (s.outcome.weight !== 0) out.push({ name: 'outcome', python: `${s.outcome.weight} * step["reward"]` });
  if (s.progress.weight !== 0) out.push({ name: 'progress', python: `${s.progress.weight} * step["info"]["progress"]` });
  if (s.format.weight !== 0) out.push({ name: 'format', python: `-${s.format.weight} * (1 if step["info"]["malformed"] else 0)` });
  if (s.toolCost.weight !== 0) out.push({ name: 'toolCost', python: `-${s.toolCost.weight} * (1 if step["info"]["toolCall"] is not None else 0)` });
  if (s.length.weight !== 0) out.push({ name: 'length', python: null, why: `−${s.length.weight} per policy token beyond ${s.length.freeTokens}: the env server does not see tokens; add it from the completion length in your trainer` });
  if (s.potential.weight !== 0) out.push({ name: 'potential', python: null, why: 'potential-based shaping over the full grid state: the env server does not send it' });
  return out;
}

function termLines(builtins: readonly BuiltinTerm[], terms: readonly TermTranslation[], versions: number): string[] {
  const lines: string[] = [];
  for (const b of builtins) lines.push(b.python === null ? `shaping.${b.name}: not translated (${b.why})` : `shaping.${b.name}: translated (reward_terms.${b.name})`);
  for (const t of terms) lines.push(t.python === null ? `reward term '${t.name}': not translated to Python (${t.why}); scored by the env server (POST /score, started with --reward-file reward_terms.js)` : `reward term '${t.name}': translated (reward_terms.${t.name}, reads ${t.fields.map((f) => `step.${f}`).join(', ') || 'no step field'})`);
  if (versions > 1) lines.push(`reward code: the run went through ${versions} versions; the export has the last (reward_terms.js)`);
  return lines;
}

function readme(x: ExportInputs, to: ExportTarget, mapped: Mapped, terms: string[], serve: string, launch: string): string {
  const notTranslated = [...terms.filter((l) => l.includes('not translated')), ...mapped.notes];
  const translated = terms.filter((l) => !l.includes('not translated'));
  const fw = to === 'trl' ? "TRL's GRPOTrainer (config checked against TRL 1.10.0.dev0's GRPOConfig fields)" : "veRL through verl-tool (keys checked against veRL 0.8.0.dev's ppo_trainer.yaml; agent.* keys are verl-tool's)";
  return [
    `${x.name}: exported from the Agentic RL Playground for ${fw}.`,
    `Run config: playground-config.json (env ${x.config.env.id}, algo ${x.config.algo.algo}, ${x.config.iterations} iterations, seed ${x.config.seed}).`,
    '',
    '1. Start the env server from a checkout of the playground:',
    `   ${serve}`,
    '2. Launch:',
    `   ${launch}`,
    '',
    'Reward terms (reward_terms.py; each named as the run\'s reward/<term> metric):',
    ...translated.map((l) => `  - ${l}`),
    '',
    'Did not translate:',
    ...(notTranslated.length ? notTranslated.map((l) => `  - ${l}`) : ['  - (nothing)']),
    '',
  ].join('\n');
}

/** The files of the export folder, or why this run cannot be exported to `to`. */
export function buildExport(x: ExportInputs, to: ExportTarget): ExportResult {
  const why = unsupported(x.config, to);
  if (why) return { ok: false, message: why };
  const env = makeEnv(x.config.env.id, x.config.env.kwargs);
  const family = familyOf(env.spec);
  const isGrid = env.spec.actionSpace.kind === 'discrete';
  if (to === 'verl' && !family.wire.verlTool) return { ok: false, message: `${x.config.env.id} is a ${env.spec.family} env: veRL exports go through verl-tool's tool server, which \`npm run serve\` offers for tool envs only; export it to trl instead` };
  const maxTurns = env.spec.maxSteps;
  const mapped = to === 'trl' ? trlArgs(x.config, maxTurns) : verlOverrides(x.config, maxTurns);
  const builtins = builtinTerms(x.config.shaping);
  const terms = x.rewardCode.trim() ? translateTerms(x.rewardCode, availableFields(isGrid, to)) : [];
  const labels = env.spec.actionSpace.kind === 'discrete' ? (env.spec.actionSpace.labels ?? null) : null;
  const files: Record<string, string> = {
    'playground-config.json': JSON.stringify(x.config, null, 2) + '\n',
    'reward_terms.py': rewardTermsPy({ envId: x.config.env.id, kwargs: x.config.env.kwargs, actionLabels: labels, builtins, terms }),
  };
  const onServer = terms.some((t) => t.python === null);
  if (x.rewardCode.trim()) files['reward_terms.js'] = x.rewardCode;
  const rewardFlag = onServer ? ' --reward-file reward_terms.js' : '';
  const envKw = Object.keys(x.config.env.kwargs).length ? ` (env kwargs ${JSON.stringify(x.config.env.kwargs)} are sent with every reset)` : '';
  let serve: string;
  let launch: string;
  if (to === 'trl') {
    files['grpo_config.json'] = JSON.stringify(mapped.values, null, 2) + '\n';
    files['train_trl.py'] = trlScriptPy(x.config.env.id, isGrid);
    serve = `npm run serve -- --env ${x.config.env.id} --port 8000 --max-sessions 4096 --max-sessions-per-client 4096${rewardFlag}${envKw}`;
    launch = 'sh launch.sh   (PLAYGROUND_SERVER=http://HOST:8000 MODEL=<causal LM> python3 train_trl.py)';
    files['launch.sh'] = `#!/bin/sh\n# The env server must be up first (README.txt, step 1).\nset -e\ncd "$(dirname "$0")"\nexport PLAYGROUND_SERVER="\${PLAYGROUND_SERVER:-http://127.0.0.1:8000}"\npython3 train_trl.py "$@"\n`;
  } else {
    for (const [name, text] of Object.entries(x.verlRecipe)) files[name] = text;
    files['terms_reward.py'] = verlTermsRewardPy();
    const overrides = Object.entries(mapped.values).map(([k, v]) => `${k}=${hydraValue(v)}`);
    files['verl_overrides.txt'] = overrides.join('\n') + '\n';
    serve = `npm run serve -- --env ${x.config.env.id} --host 0.0.0.0 --port 30500 --max-sessions 4096 --max-sessions-per-client 4096${rewardFlag}${envKw}`;
    launch = 'sh launch.sh   (prepares data/ from the server, then runs verl_tool.trainer.main_ppo)';
    files['launch.sh'] = verlLaunch(overrides, maxTurns, x.config.env.kwargs);
  }
  const lines = termLines(builtins, terms, x.rewardVersions);
  files['README.txt'] = readme(x, to, mapped, lines, serve, launch);
  return { ok: true, files, notes: [...lines.filter((l) => l.includes('not translated')), ...mapped.notes] };
}

function verlLaunch(overrides: string[], maxTurns: number, kwargs: Record<string, unknown>): string {
  const kw = Object.keys(kwargs).length ? ` --kwargs '${JSON.stringify(kwargs)}'` : '';
  return `#!/bin/sh
# The env server must be up first (README.txt, step 1). SERVER: its address as the trainer's nodes reach it.
set -e
cd "$(dirname "$0")"
SERVER="\${SERVER:-http://127.0.0.1:30500}"
export PLAYGROUND_SERVER="$SERVER"
MODEL="\${MODEL:-Qwen/Qwen2.5-1.5B-Instruct}"
python3 prepare_data.py --server "$SERVER" --out data${kw}
python3 -m verl_tool.trainer.main_ppo \\
${overrides.map((o) => `    ${o} \\`).join('\n')}
    data.train_files=data/train.parquet data.val_files=data/val.parquet \\
    actor_rollout_ref.model.path="$MODEL" \\
    actor_rollout_ref.rollout.name=vllm actor_rollout_ref.rollout.mode=async \\
    actor_rollout_ref.agent.enable_agent=True \\
    actor_rollout_ref.agent.tool_server_url="$SERVER/get_observation" \\
    actor_rollout_ref.agent.max_turns=${maxTurns} \\
    actor_rollout_ref.agent.action_stop_tokens="$PWD/stop_tokens.txt" \\
    actor_rollout_ref.agent.enable_mtrl=True \\
    reward_model.reward_manager=playground_env \\
    custom_reward_function.path="$PWD/terms_reward.py" \\
    custom_reward_function.name=compute_score \\
    "trainer.logger=['console']" "$@"
`;
}

/** The export inputs of an imported or stored run: its config, name and the reward code it ended with. */
export function exportInputs(run: { info: { name: string; liveEdits: readonly { iteration: number; path: string; value: unknown }[] }; config: RunConfig }, verlRecipe: Readonly<Record<string, string>>): ExportInputs {
  const versions = rewardVersions(run.config.reward.code, run.info.liveEdits);
  return { config: run.config, name: run.info.name, rewardCode: versions.at(-1)?.code ?? '', rewardVersions: versions.length, verlRecipe };
}
