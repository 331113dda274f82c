/**
 * `--reward FILE` for `npm run train`: the file's text becomes the run config's `reward.code`
 * (so config.json alone re-creates the run), validated like any config field.
 */
import { readFileSync } from 'node:fs';
import { parseRunConfig, type RunConfig } from '../core/presets/schema.ts';
import { UsageError } from './args.ts';

/** `config` with `reward.code` read from `file`; a missing file or a code the config refuses is a usage error. */
export function withRewardFile(config: RunConfig, file: string): RunConfig {
  let code: string;
  try {
    code = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--reward ${file}: cannot read it (${(e as Error).message})`);
  }
  const r = parseRunConfig({ ...config, reward: { ...config.reward, code } });
  if (!r.ok) throw new UsageError(`--reward ${file}: ${r.messages.join('; ')}`);
  return r.config;
}
