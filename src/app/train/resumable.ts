/**
 * Whether a saved run can go on in this tab (Resume in the Runs view), and with which draft: its
 * stored config with the reward code that scored the iterations up to its checkpoint.
 */
import type { Checkpoint } from '../../core/runs/checkpoint.ts';
import type { RunMeta, RunStore } from '../../runtime/storage/runStore.ts';
import { recordedElsewhere } from '../../runtime/storage/browser.ts';
import { blockingFields, validate, type Validation } from './config.ts';
import type { DraftConfig } from './fields.ts';

export type Resumable =
  | { ok: true; meta: RunMeta; checkpoint: Checkpoint; draft: DraftConfig; validation: Validation }
  /** Why not, as the notice says it. */
  | { ok: false; level: 'info' | 'warning' | 'error'; message: string };

/** `liveId`: the run this tab records now; `backend`: the form's backend, which the resumed draft keeps. */
export async function resumable(store: RunStore, id: string, liveId: string | null, backend: DraftConfig['backend']): Promise<Resumable> {
  if (id === liveId) return { ok: false, level: 'warning', message: 'This run is training in this tab already.' };
  // Two tabs writing into one record would interleave its rows: the tab that records it holds its lock.
  if (await recordedElsewhere(id)) return { ok: false, level: 'warning', message: 'This run is training in another tab of this browser: resume it there, or close that tab first (its run is then listed as interrupted).' };
  const [meta, checkpoint] = await Promise.all([store.getRun(id), store.getCheckpoint(id)]);
  if (!meta) return { ok: false, level: 'warning', message: 'That run is no longer saved.' };
  if (!checkpoint) return { ok: false, level: 'warning', message: `"${meta.name}" has no checkpoint to resume from (it stopped before its first save, or was recorded before its kind of run saved them).` };
  if (checkpoint.iteration >= meta.config.iterations) return { ok: false, level: 'info', message: `"${meta.name}" is at iteration ${checkpoint.iteration} of ${meta.config.iterations}: nothing left to train.` };
  // Reward code applied mid-run is a live edit, not part of the stored config: resume with the
  // code that scored the iterations up to the checkpoint.
  const codeEdit = meta.liveEdits.filter((e) => e.path === 'reward.code' && e.iteration <= checkpoint.iteration).at(-1);
  const config = codeEdit ? { ...meta.config, reward: { ...meta.config.reward, code: String(codeEdit.value) } } : meta.config;
  const draft: DraftConfig = { ...structuredClone(config), backend } as DraftConfig;
  // A code env's config is checked by loading its module in the sandbox, which a page that opened
  // on the Runs view has not loaded yet (Resume is the user's ask to run it again).
  if (config.env.id.startsWith('code/')) {
    try {
      const { loadCodeEnvs } = await import('../../runtime/codeEnv/index.ts');
      await loadCodeEnvs();
    } catch (e) {
      return { ok: false, level: 'error', message: `"${meta.name}" trains a code env, and its sandbox did not load: ${e instanceof Error ? e.message : String(e)}. Reload the page and try again.` };
    }
  }
  const validation = validate(draft);
  if (!validation.ok) return { ok: false, level: 'error', message: `"${meta.name}" has a config this playground no longer accepts: ${blockingFields(validation, (p) => p).join('; ')}` };
  return { ok: true, meta, checkpoint, draft, validation };
}
