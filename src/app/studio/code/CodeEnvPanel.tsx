/**
 * The env studio's Code tab: write an environment as a JavaScript module, check it on every
 * save (checkCodeEnv: each problem on its line, with the rule), play it by hand, run a random
 * agent over 100 seeds, and train on it with any preset's algorithm.
 *
 * The code never runs on the page: checks, play and the random agent run in the code worker's
 * QuickJS sandbox (runtime/codeEnv/studioWorker.ts), training in the training worker's (also
 * QuickJS: the V8 sandbox with batched stepping exists only in Node, runtime/codeEnv/nodeVm.ts). Code
 * that arrives in a link or a file opens read-only under a banner, and nothing runs — not even
 * the check — until the person has read it and pressed Run.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { CodeEnvProblem } from '../../../core/envs/code/index.ts';
import { familyOf } from '../../../core/envs/families.ts';
import type { RandomAgentResult, StudioCheck } from '../../../runtime/codeEnv/studioWorker.ts';
import { useStore } from '../../store.ts';
import { CodeEditor } from './CodeEditor.tsx';
import { CodePlay } from './CodePlay.tsx';
import { CODE_ENV_EXAMPLES } from './examples.ts';
import { codeEnvLink } from './link.ts';
import { codeStudio, messageOf } from './studioClient.ts';
import { presetsFor, trainOnCode } from './train.ts';
import { codeFileName, readSavedCode, savedName } from './saved.ts';
import { browserRunStore } from '../../../runtime/storage/browser.ts';
import { deleteDesign, listDesigns, newDesignId, saveDesign, type DesignRecord } from '../../../runtime/storage/designs.ts';
import { download } from '../../runs/download.ts';
import './codeEnv.css';

/** Where the person's own code is kept between visits. */
const STORAGE_KEY = 'studio.codeEnv';
/** Seeds the random agent plays. */
const RANDOM_EPISODES = 100;

export interface CodeEnvPanelProps {
  /** Code that arrived from outside (a link, a file): shown read-only until Run. Null: the person's own code. */
  incoming?: { code: string; from: 'link' | 'file' } | null;
  /** Called once "Train on this env" has set up the run (the host shows the Train view). */
  onTrain?: () => void;
  /** Called when the person runs a link's code or sets it aside for their own. */
  onIncomingSettled?: () => void;
}

function ownCode(): string {
  try {
    return localStorage.getItem(STORAGE_KEY) ?? CODE_ENV_EXAMPLES[0].code;
  } catch {
    return CODE_ENV_EXAMPLES[0].code;
  }
}

/** The code envs saved in this browser, newest first, and a way to list them again. */
function useSavedCode(): [DesignRecord[], () => void] {
  const [saved, setSaved] = useState<DesignRecord[]>([]);
  const reload = useCallback(() => {
    const store = browserRunStore();
    if (store) listDesigns(store, 'code').then(setSaved, (e: Error) => useStore.getState().notify('error', `Could not list saved code envs: ${e.message}`));
  }, []);
  useEffect(reload, [reload]);
  return [saved, reload];
}

/** What the Check line calls an env's observation. */
const OBS_WORD = { grid: 'grid', text: 'text', vector: 'vector' } as const;

export function CodeEnvPanel({ incoming = null, onTrain, onIncomingSettled }: CodeEnvPanelProps) {
  const [text, setText] = useState(() => incoming?.code ?? ownCode());
  const [pending, setPending] = useState<'link' | 'file' | null>(incoming?.from ?? null);
  const [check, setCheck] = useState<(StudioCheck & { code: string }) | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [random, setRandom] = useState<RandomAgentResult | null>(null);
  const presets = useStore((s) => s.presets);
  const [chosen, setPresetId] = useState<string>('');
  const checked = check !== null && check.code === text && check.problems.length === 0 && check.spec !== null ? check : null;
  const trainable = useMemo(() => (checked?.spec ? presetsFor(presets, checked.spec.family) : []), [presets, checked]);
  // The person's pick while it fits this env; otherwise the first preset that does.
  const presetId = trainable.some((p) => p.id === chosen) ? chosen : (trainable[0]?.id ?? '');
  const [saved, reloadSaved] = useSavedCode();
  /** The saved record the editor's code came from (Save replaces it), or null (Save adds one). */
  const [savedId, setSavedId] = useState<string | null>(null);
  const name = savedName(text, checked?.spec?.title ?? null);

  const saveInBrowser = async () => {
    const store = browserRunStore();
    const notify = useStore.getState().notify;
    if (!store) return notify('error', 'This browser has no IndexedDB here (a private window?): export the env as .js instead.');
    const id = savedId ?? newDesignId();
    try {
      await saveDesign(store, { id, kind: 'code', name, updatedAt: Date.now(), data: { code: text } });
      setSavedId(id);
      reloadSaved();
      notify('info', `Saved "${name}" in this browser.`);
    } catch (e) {
      notify('error', `Could not save the code env: ${(e as Error).message}. Export it as .js to keep it.`);
    }
  };
  const openSaved = (d: DesignRecord) => {
    const r = readSavedCode(d.data);
    if ('problem' in r) return useStore.getState().notify('error', `The saved code env "${d.name}" is damaged: ${r.problem}.`);
    // The person's own code, saved by them: checked at once, no review banner.
    setText(r.code);
    setSavedId(d.id);
    void save(r.code);
  };

  const save = async (code = text) => {
    if (pending) return;
    setBusy('Checking…');
    setFailure(null);
    setRandom(null);
    try {
      localStorage.setItem(STORAGE_KEY, code);
    } catch {
      // Storage full or blocked: the check still runs; the code stays in the editor.
    }
    try {
      setCheck({ ...(await codeStudio().check(code)), code });
    } catch (e) {
      setFailure(messageOf(e));
    } finally {
      setBusy(null);
    }
  };
  const run = () => {
    if (pending === 'link') onIncomingSettled?.();
    setPending(null);
    void saveAfterReview();
  };
  // The person's own code (last saved) back in the editor; the link's or file's code is dropped unrun.
  const keepOwn = () => {
    if (pending === 'link') onIncomingSettled?.();
    setPending(null);
    setText(ownCode());
    setCheck(null);
    setRandom(null);
  };
  // Run is the person's consent: the first check (the first execution) happens only here.
  const saveAfterReview = async () => {
    setBusy('Checking…');
    try {
      setCheck({ ...(await codeStudio().check(text)), code: text });
    } catch (e) {
      setFailure(messageOf(e));
    } finally {
      setBusy(null);
    }
  };
  const openFile = async (file: File) => {
    const code = await file.text();
    setText(code);
    setCheck(null);
    setRandom(null);
    setSavedId(null);
    setPending('file');
  };
  const randomAgent = async () => {
    setBusy(`Random agent: ${RANDOM_EPISODES} episodes…`);
    setFailure(null);
    try {
      setRandom(await codeStudio().random(text, RANDOM_EPISODES));
    } catch (e) {
      setFailure(messageOf(e));
    } finally {
      setBusy(null);
    }
  };
  const copyLink = async () => {
    const url = `${location.origin}${location.pathname}${codeEnvLink(text)}`;
    try {
      await navigator.clipboard.writeText(url);
      useStore.getState().notify('info', 'Link copied: it carries this code, and opens read-only until the person presses Run.');
    } catch {
      useStore.getState().notify('warning', `Copy failed; the link is: ${url}`);
    }
  };

  const problems: readonly CodeEnvProblem[] = check && check.code === text ? check.problems : [];
  return (
    <div className="code-env-panel" data-testid="code-env-panel">
      {pending && (
        <div className="code-env-banner" role="alert" data-testid="code-env-banner">
          <p>
            <strong>This {pending} carries code.</strong> Nothing has run yet. Review it below, then press Run to check it in the sandbox.
          </p>
          <div className="code-env-banner-actions">
            <button type="button" className="btn btn-primary" onClick={run} data-testid="code-env-run">
              Run
            </button>
            <button type="button" className="btn" onClick={keepOwn} data-testid="code-env-keep-own" title="Drops this code unrun and puts your own last saved code back in the editor">
              Keep my code
            </button>
          </div>
        </div>
      )}
      <div className="code-env-row code-env-toolbar">
        <label>
          Example{' '}
          <select
            value=""
            disabled={pending !== null}
            onChange={(e) => {
              const ex = CODE_ENV_EXAMPLES.find((x) => x.id === e.target.value);
              if (!ex) return;
              setText(ex.code);
              setSavedId(null);
              void save(ex.code);
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
          <input type="file" accept=".js,.mjs,text/javascript" className="visually-hidden" onChange={(e) => e.target.files?.[0] && void openFile(e.target.files[0])} data-testid="code-env-file" />
        </label>
        <button type="button" className="btn btn-small" onClick={() => void copyLink()} data-testid="code-env-copy-link">
          Copy link
        </button>
        <button type="button" className="btn btn-small" disabled={pending !== null} onClick={() => void saveInBrowser()} data-testid="code-env-save-browser" title="Keeps this module in this browser's list of saved code envs">
          {savedId ? 'Save in this browser (replace)' : 'Save in this browser'}
        </button>
        <button type="button" className="btn btn-small" onClick={() => download(codeFileName(name), text, 'text/javascript')} data-testid="code-env-export">
          Export .js
        </button>
      </div>
      <section aria-labelledby="code-env-saved-h" data-testid="code-env-saved-box">
        <h2 id="code-env-saved-h">Saved in this browser ({saved.length})</h2>
        {saved.length === 0 ? (
          <p className="muted small">None yet: Save in this browser keeps the module here.</p>
        ) : (
          <ul className="code-env-saved" data-testid="code-env-saved">
            {saved.map((d) => (
              <li key={d.id}>
                <button type="button" className="link-btn" disabled={pending !== null} onClick={() => openSaved(d)} data-testid="code-env-saved-open">
                  {d.name}
                </button>{' '}
                <span className="muted small">{new Date(d.updatedAt).toLocaleString()}</span>{' '}
                <button
                  type="button"
                  className="btn btn-small"
                  aria-label={`Delete ${d.name}`}
                  onClick={() =>
                    void deleteDesign(browserRunStore()!, d.id).then(() => {
                      if (d.id === savedId) setSavedId(null);
                      reloadSaved();
                    })
                  }
                >
                  Delete
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>
      <CodeEditor text={text} readOnly={pending !== null} problems={problems} onChange={setText} />
      <div className="code-env-row">
        <button type="button" className="btn btn-primary" disabled={pending !== null || busy !== null} onClick={() => void save()} data-testid="code-env-save">
          Save and check
        </button>
        <span role="status" aria-live="polite" data-testid="code-env-check-status">
          {busy ?? (pending ? 'Not run: review the code, then press Run.' : check === null ? 'Not checked yet.' : check.code !== text ? 'Edited since the last check: save to check again.' : checked ? `Check passed: ${checked.spec!.title} (${OBS_WORD[checked.spec!.observation]}, ${checked.spec!.actions.length} action${checked.spec!.actions.length === 1 ? '' : 's'}, ${checked.spec!.maxSteps} steps at most).` : `Check failed: ${problems.length} problem${problems.length === 1 ? '' : 's'}.`)}
        </span>
      </div>
      {failure && (
        <p className="code-env-error" role="alert" data-testid="code-env-failure">
          {failure}
        </p>
      )}
      {problems.length > 0 && (
        <ul className="code-env-problems" data-testid="code-env-problems">
          {problems.map((p, i) => (
            <li key={i}>
              {p.line ? <strong>{p.near ? 'Near line' : 'Line'} {p.line}</strong> : <strong>Module</strong>} <span className="code-env-rule">[{p.rule}]</span> {p.message.replace(/ \((near )?line \d+\)$/, '')}
            </li>
          ))}
        </ul>
      )}
      {checked?.spec && (
        <>
          <CodePlay key={checked.code} code={checked.code} spec={checked.spec} />
          <section aria-labelledby="code-env-random-h">
            <h2 id="code-env-random-h">Random agent</h2>
            <div className="code-env-row">
              <button type="button" className="btn" disabled={busy !== null} onClick={() => void randomAgent()} data-testid="code-env-random">
                Run a random agent ({RANDOM_EPISODES} seeds)
              </button>
              {random && (
                <span role="status" data-testid="code-env-random-result">
                  success {(100 * random.successRate).toFixed(0)}% over {random.episodes} seeds · mean return {random.meanReturn.toFixed(3)} · mean length {random.meanLength.toFixed(1)}
                </span>
              )}
            </div>
          </section>
          <section aria-labelledby="code-env-train-h">
            <h2 id="code-env-train-h">Train</h2>
            <div className="code-env-row">
              {trainable.length > 0 && (
                <label>
                  Algorithm (preset){' '}
                  <select value={presetId} onChange={(e) => setPresetId(e.target.value)} data-testid="code-env-preset">
                    {trainable.map((p) => (
                      <option key={p.id} value={p.id}>
                        {p.title}
                      </option>
                    ))}
                  </select>
                </label>
              )}
              <button type="button" className="btn btn-primary" disabled={presetId === '' || busy !== null} onClick={() => void trainOnCode(checked.code, presetId, onTrain)} data-testid="code-env-train">
                Train on this env
              </button>
              {trainable.length === 0 && <span>No preset trains a {familyOf(checked.spec).label} code env here yet (the CLI does: see examples/envs/guess-number.run.json).</span>}
            </div>
            <p className="muted" data-testid="code-env-where">
              In this tab the env runs in the QuickJS sandbox, which interprets it (about 1/70 of a built-in env's speed).{' '}
              {checked.spec.observation === 'grid' ? (
                <>
                  <code>npm run train -- --env-file env.js</code> runs it at V8 speed in Node&apos;s sandbox, all envs of a step in one call.
                </>
              ) : (
                `The CLI runs ${checked.spec.observation} envs in QuickJS too.`
              )}
            </p>
          </section>
        </>
      )}
    </div>
  );
}
