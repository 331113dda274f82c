/** The Runs view's TRL / veRL experiment export: `npm run export`'s folder as one .tar download. */
import type { RunData } from '../../core/runs/format.ts';
import { safeFileName } from '../../core/runs/format.ts';
import type { ExportTarget } from '../../core/export/bundle.ts';
import { download } from './download.ts';

type Notify = (level: 'info' | 'warning' | 'error', message: string) => void;

export async function downloadExperiment(run: RunData, to: ExportTarget, notify: Notify): Promise<void> {
  try {
    // Loaded on demand (the bundle builder and the recipe's files are not otherwise needed on the page).
    await (await import('../../runtime/codeEnv/index.ts')).ensureCodeEnvsFor(run.config);
    const [{ buildExport, exportInputs }, { tarFolder }, prepare, reward, stops] = await Promise.all([
      import('../../core/export/bundle.ts'),
      import('../../core/export/tar.ts'),
      import('../../../examples/verl/prepare_data.py?raw'),
      import('../../../examples/verl/playground_reward.py?raw'),
      import('../../../examples/verl/stop_tokens.txt?raw'),
    ]);
    const recipe = { 'prepare_data.py': prepare.default, 'playground_reward.py': reward.default, 'stop_tokens.txt': stops.default };
    const result = buildExport(exportInputs(run, recipe), to);
    if (!result.ok) {
      notify('warning', `Not exported: ${result.message}.`);
      return;
    }
    const folder = `${safeFileName(run.info.name)}-${to}`;
    download(`${folder}.tar`, tarFolder(folder, result.files) as Uint8Array<ArrayBuffer>, 'application/x-tar');
    notify('info', `Exported ${Object.keys(result.files).length} files as ${folder}.tar (tar -xf ${folder}.tar). ${result.notes.length} setting${result.notes.length === 1 ? '' : 's'} did not translate: README.txt lists them.`);
  } catch (e) {
    notify('error', `The experiment could not be exported: ${(e as Error).message}`);
  }
}
