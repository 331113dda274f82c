/**
 * The Code tab's pieces: the review banner over code from a link or a file, the toolbar, the
 * list of code envs saved in this browser, the check's status line and problems, and the
 * random agent and Train sections shown once the code passes its check.
 */
import type { CodeEnvProblem } from '../../../core/envs/code/index.ts';
import { familyOf } from '../../../core/envs/families.ts';
import type { RandomAgentResult, StudioCheck, StudioSpec } from '../../../runtime/codeEnv/studioWorker.ts';
import type { DesignRecord } from '../../../runtime/storage/designs.ts';
import type { Preset } from '../../train/config.ts';
import { useStore } from '../../store.ts';
import { CODE_ENV_EXAMPLES } from './examples.ts';
import { codeEnvLink } from './link.ts';
import { RANDOM_EPISODES } from './codeEnvState.ts';

/** The banner over code that arrived from outside: nothing runs until Run. */
export function ReviewBanner({ from, onRun, onKeepOwn }: { from: 'link' | 'file'; onRun: () => void; onKeepOwn: () => void }) {
  return (
    <div className="code-env-banner" role="alert" data-testid="code-env-banner">
      <p>
        <strong>This {from} carries code.</strong> Nothing has run yet. Review it below, then press Run to check it in the sandbox.
      </p>
      <div className="code-env-banner-actions">
        <button type="button" className="btn btn-primary" onClick={onRun} data-testid="code-env-run">
          Run
        </button>
        <button type="button" className="btn" onClick={onKeepOwn} data-testid="code-env-keep-own" title="Drops this code unrun and puts your own last saved code back in the editor">
          Keep my code
        </button>
      </div>
    </div>
  );
}

async function copyLink(text: string) {
  const url = `${location.origin}${location.pathname}${codeEnvLink(text)}`;
  try {
    await navigator.clipboard.writeText(url);
    useStore.getState().notify('info', 'Link copied: it carries this code, and opens read-only until the person presses Run.');
  } catch {
    useStore.getState().notify('warning', `Copy failed; the link is: ${url}`);
  }
}

export interface ToolbarProps {
  text: string;
  /** The code awaits review: nothing that would run or keep it is offered. */
  locked: boolean;
  /** The editor's code came from a saved record (Save replaces it). */
  replaces: boolean;
  onExample: (code: string) => void;
  onOpenFile: (file: File) => void;
  onSaveInBrowser: () => void;
  onExport: () => void;
}

export function CodeEnvToolbar({ text, locked, replaces, onExample, onOpenFile, onSaveInBrowser, onExport }: ToolbarProps) {
  return (
    <div className="code-env-row code-env-toolbar">
      <label>
        Example{' '}
        <select
          value=""
          disabled={locked}
          onChange={(e) => {
            const ex = CODE_ENV_EXAMPLES.find((x) => x.id === e.target.value);
            if (ex) onExample(ex.code);
          }}
          data-testid="code-env-example"
        >
          <option value="">Open an example…</option>
          {CODE_ENV_EXAMPLES.map((x) => (
            <option key={x.id} value={x.id}>
              {x.title}
            </option>
          ))}
        </select>
      </label>
      <label className="btn btn-small code-env-file">
        Open file…
        <input type="file" accept=".js,.mjs,text/javascript" className="visually-hidden" onChange={(e) => e.target.files?.[0] && onOpenFile(e.target.files[0])} data-testid="code-env-file" />
      </label>
      <button type="button" className="btn btn-small" onClick={() => void copyLink(text)} data-testid="code-env-copy-link">
        Copy link
      </button>
      <button type="button" className="btn btn-small" disabled={locked} onClick={onSaveInBrowser} data-testid="code-env-save-browser" title="Keeps this module in this browser's list of saved code envs">
        {replaces ? 'Save in this browser (replace)' : 'Save in this browser'}
      </button>
      <button type="button" className="btn btn-small" onClick={onExport} data-testid="code-env-export">
        Export .js
      </button>
    </div>
  );
}

export function SavedCodeList({ saved, locked, onOpen, onDelete }: { saved: DesignRecord[]; locked: boolean; onOpen: (d: DesignRecord) => void; onDelete: (d: DesignRecord) => void }) {
  return (
    <section aria-labelledby="code-env-saved-h" data-testid="code-env-saved-box">
      <h2 id="code-env-saved-h">Saved in this browser ({saved.length})</h2>
      {saved.length === 0 ? (
        <p className="muted small">None yet: Save in this browser keeps the module here.</p>
      ) : (
        <ul className="code-env-saved" data-testid="code-env-saved">
          {saved.map((d) => (
            <li key={d.id}>
              <button type="button" className="link-btn" disabled={locked} onClick={() => onOpen(d)} data-testid="code-env-saved-open">
                {d.name}
              </button>{' '}
              <span className="muted small">{new Date(d.updatedAt).toLocaleString()}</span>{' '}
              <button type="button" className="btn btn-small" aria-label={`Delete ${d.name}`} onClick={() => onDelete(d)}>
                Delete
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** What the Check line calls an env's observation. */
const OBS_WORD = { grid: 'grid', text: 'text', vector: 'vector' } as const;

/** The status line's words: busy, awaiting review, unchecked, stale, passed or failed. */
export function checkStatus(busy: string | null, pending: boolean, check: (StudioCheck & { code: string }) | null, text: string, checked: { spec: StudioSpec | null } | null, problems: number): string {
  if (busy !== null) return busy;
  if (pending) return 'Not run: review the code, then press Run.';
  if (check === null) return 'Not checked yet.';
  if (check.code !== text) return 'Edited since the last check: save to check again.';
  if (checked) {
    const s = checked.spec!;
    return `Check passed: ${s.title} (${OBS_WORD[s.observation]}, ${s.actions.length} action${s.actions.length === 1 ? '' : 's'}, ${s.maxSteps} steps at most).`;
  }
  return `Check failed: ${problems} problem${problems === 1 ? '' : 's'}.`;
}

export function ProblemList({ problems }: { problems: readonly CodeEnvProblem[] }) {
  return (
    <ul className="code-env-problems" data-testid="code-env-problems">
      {problems.map((p, i) => (
        <li key={i}>
          {p.line ? <strong>{p.near ? 'Near line' : 'Line'} {p.line}</strong> : <strong>Module</strong>} <span className="code-env-rule">[{p.rule}]</span> {p.message.replace(/ \((near )?line \d+\)$/, '')}
        </li>
      ))}
    </ul>
  );
}

export function RandomAgentSection({ busy, random, onRun }: { busy: boolean; random: RandomAgentResult | null; onRun: () => void }) {
  return (
    <section aria-labelledby="code-env-random-h">
      <h2 id="code-env-random-h">Random agent</h2>
      <div className="code-env-row">
        <button type="button" className="btn" disabled={busy} onClick={onRun} data-testid="code-env-random">
          Run a random agent ({RANDOM_EPISODES} seeds)
        </button>
        {random && (
          <span role="status" data-testid="code-env-random-result">
            success {(100 * random.successRate).toFixed(0)}% over {random.episodes} seeds · mean return {random.meanReturn.toFixed(3)} · mean length {random.meanLength.toFixed(1)}
          </span>
        )}
      </div>
    </section>
  );
}

export interface TrainSectionProps {
  spec: StudioSpec;
  trainable: readonly Preset[];
  presetId: string;
  busy: boolean;
  onPreset: (id: string) => void;
  onTrain: () => void;
}

export function TrainSection({ spec, trainable, presetId, busy, onPreset, onTrain }: TrainSectionProps) {
  return (
    <section aria-labelledby="code-env-train-h">
      <h2 id="code-env-train-h">Train</h2>
      <div className="code-env-row">
        {trainable.length > 0 && (
          <label>
            Algorithm (preset){' '}
            <select value={presetId} onChange={(e) => onPreset(e.target.value)} data-testid="code-env-preset">
              {trainable.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.title}
                </option>
              ))}
            </select>
          </label>
        )}
        <button type="button" className="btn btn-primary" disabled={presetId === '' || busy} onClick={onTrain} data-testid="code-env-train">
          Train on this env
        </button>
        {trainable.length === 0 && <span>No preset trains a {familyOf(spec).label} code env here yet (the CLI does: see examples/envs/guess-number.run.json).</span>}
      </div>
      <p className="muted" data-testid="code-env-where">
        In this tab the env runs in the QuickJS sandbox, which interprets it (about 1/70 of a built-in env's speed).{' '}
        {spec.observation === 'grid' ? (
          <>
            <code>npm run train -- --env-file env.js</code> runs it at V8 speed in Node&apos;s sandbox, all envs of a step in one call.
          </>
        ) : (
          `The CLI runs ${spec.observation} envs in QuickJS too.`
        )}
      </p>
    </section>
  );
}
