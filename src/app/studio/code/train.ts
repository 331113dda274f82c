/**
 * "Train on this env": the chosen preset's algorithm and model with the code env in place of its
 * env, started in the Train view like any run (the training worker loads the same sandbox).
 */
import type { Preset } from '../../train/config.ts';
import { validate } from '../../train/config.ts';
import { useStore } from '../../store.ts';
import { CODE_ENV_ID } from '../../../core/envs/code/codeEnv.ts';
import { envFamily, type EnvFamilyName } from '../../../core/envs/families.ts';

/**
 * Presets that can train a code env of `family`: grid envs with an MLP, text envs with a token
 * policy; not pipelines (distillation is a stage), two-agent setups, or shaping and reward-lab terms
 * that read a built-in grid's full state (goal distance), which a code env does not expose.
 */
export function presetsFor(presets: readonly Preset[], family: EnvFamilyName): Preset[] {
  const listed = envFamily(family).listedUnder;
  return presets.filter((p) => {
    const c = p.config;
    const plain = c.stages.length === 0 && !p.id.includes('coop') && c.shaping.potential.weight === 0 && c.shaping.progress.weight === 0 && c.reward.code.trim() === '';
    // The family's own policy; a token warm start imitates the env's expert, which a code env need not export.
    return plain && c.model.kind === listed && (c.model.kind === 'mlp' || c.warmStart === null);
  });
}

/** Sets up `preset` on the code env and starts it (the page validates the config, so it loads the sandbox too). */
export async function trainOnCode(code: string, presetId: string, onSetUp?: () => void): Promise<void> {
  const { loadCodeEnvs } = await import('../../../runtime/codeEnv/index.ts');
  await loadCodeEnvs();
  const s = useStore.getState();
  s.choosePreset(presetId);
  const base = useStore.getState().draft;
  const draft = { ...base, env: { id: CODE_ENV_ID, kwargs: { code } } };
  const validation = validate(draft);
  // The preset stays the form's base, so the env shows as changed and the Train view's link
  // carries the module (opened again, it lands in the Code tab to be reviewed: link.ts).
  useStore.setState({ draft, validation, view: 'train' });
  onSetUp?.();
  if (!validation.ok) {
    s.notify('error', `This env cannot train with ${presetId}: ${[...validation.other, ...Object.values(validation.byField).flat()].join('; ')}`);
    return;
  }
  await useStore.getState().startRun();
}
