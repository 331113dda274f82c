/**
 * The --out folder of `npm run train`: checked and created before anything trains, written
 * atomically where a half-written file would be wrong, and described when a run quits at once.
 */
import { existsSync, mkdirSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { REWARD_VERSIONS_FILE } from '../core/runs/format.ts';
import { UsageError } from './args.ts';

/** What a run writes into its --out folder: finding any of them there means a run lives there. */
export const RUN_FILES = ['config.json', 'metrics.jsonl', 'trajectories.jsonl', 'policy.onnx', 'policy.json', 'eval.json', 'eval-episodes.jsonl', 'checkpoint.json', REWARD_VERSIONS_FILE];

/** Writes via a temporary file and a rename, so a crash mid-write never leaves half a checkpoint. */
export function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/**
 * Makes sure `out` can take this run's files before anything trains: refuses a folder that
 * already holds a run (unless `force`), creates missing folders, and writes a probe file, so an
 * unwritable path fails at once with its reason. Returns the folders it created, outermost
 * first (`removeCreated` takes them away again when the run is refused after all).
 */
export function prepareOut(out: string, force: boolean): string[] {
  if (out.trim() === '') throw new UsageError('--out must name a folder (got an empty string; it would have meant the current folder)');
  const abs = resolve(out);
  const missing: string[] = [];
  try {
    if (existsSync(abs)) {
      if (!statSync(abs).isDirectory()) throw new Error('it exists and is not a folder');
      const taken = RUN_FILES.filter((f) => existsSync(join(abs, f)));
      if (taken.length > 0 && !force) throw new UsageError(`--out ${out} already holds a run (${taken.join(', ')}): pass --force to overwrite it, or choose another folder`);
    } else {
      // mkdir -p one level at a time: Node's recursive mkdir never returns on some special file
      // systems (--out /proc/x hung), while a plain mkdir fails at once with the reason.
      const wanted: string[] = [];
      for (let p = abs; !existsSync(p); p = dirname(p)) wanted.unshift(p);
      for (const dir of wanted) {
        mkdirSync(dir);
        missing.push(dir);
      }
    }
    const probe = join(abs, `.write-test-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (e) {
    removeCreated(missing);
    if (e instanceof UsageError) throw e;
    throw new UsageError(`cannot write the run to --out ${out}: ${(e as Error).message}`);
  }
  return missing;
}

/** Removes folders `prepareOut` created (innermost first), each only while it is still empty. */
export function removeCreated(dirs: readonly string[]): void {
  for (const dir of [...dirs].reverse()) {
    try {
      rmdirSync(dir);
    } catch {
      return; // not empty (or gone): leave it and its parents
    }
  }
}

/** Where a run stands when a second stop signal quits it at once. */
export interface RunProgress {
  /** 'setup' before the trainer exists, 'warm start' while its imitation warm start trains, then 'training'. */
  phase: 'setup' | 'warm start' | 'training';
  /** The warm start's last finished step (1-based) and its step count; 0 of 0 before it begins. */
  warmStep: number;
  warmSteps: number;
  /** Iterations whose metric rows metrics.jsonl holds (a resumed run counts from 0). */
  iterations: number;
  /** The iteration of the checkpoint.json in the folder (null: none). */
  checkpointAt: number | null;
}

/** The line a second stop signal prints before quitting: where the run was, what the folder keeps, how to go on. */
export function quitNowMessage(sig: string, out: string, p: RunProgress): string {
  const during = p.phase === 'warm start' ? ` during the warm start (step ${p.warmStep} of ${p.warmSteps}; its weights are not kept)` : p.phase === 'setup' ? ' before training began' : ` at iteration ${p.iterations}`;
  const files = existsSync(out) ? RUN_FILES.filter((f) => existsSync(join(out, f))) : [];
  const kept = files.length > 0 ? `${out} keeps what was written so far (${files.join(', ')}; metrics.jsonl: ${p.iterations} iterations)` : `nothing was written to ${out}`;
  const next = p.checkpointAt !== null ? `continue from checkpoint.json (iteration ${p.checkpointAt}) with: npm run train -- --resume ${out}` : 'no checkpoint was saved: run it again to start over (--force to reuse the folder)';
  return `\n${sig} again: quitting now${during}; ${kept}; ${next}`;
}
