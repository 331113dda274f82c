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
import { useMemo, useState } from 'react';
import type { CodeEnvProblem } from '../../../core/envs/code/index.ts';
import { useStore } from '../../store.ts';
import { CodeEditor } from './CodeEditor.tsx';
import { CodePlay } from './CodePlay.tsx';
import { presetsFor, trainOnCode } from './train.ts';
import { codeFileName, savedName } from './saved.ts';
import { download } from '../../runs/download.ts';
import { ownCode, useCodeCheck, useSavedCodeEnvs } from './codeEnvState.ts';
import { checkStatus, CodeEnvToolbar, ProblemList, RandomAgentSection, ReviewBanner, SavedCodeList, TrainSection } from './CodeEnvParts.tsx';
import './codeEnv.css';

export interface CodeEnvPanelProps {
  /** Code that arrived from outside (a link, a file): shown read-only until Run. Null: the person's own code. */
  incoming?: { code: string; from: 'link' | 'file' } | null;
  /** Called once "Train on this env" has set up the run (the host shows the Train view). */
  onTrain?: () => void;
  /** Called when the person runs a link's code or sets it aside for their own. */
  onIncomingSettled?: () => void;
}

export function CodeEnvPanel({ incoming = null, onTrain, onIncomingSettled }: CodeEnvPanelProps) {
  const { text, setText, pending, setPending, check, busy, failure, random, save, checkReviewed, randomAgent, replace } = useCodeCheck(incoming);
  const presets = useStore((s) => s.presets);
  const [chosen, setPresetId] = useState<string>('');
  const checked = check !== null && check.code === text && check.problems.length === 0 && check.spec !== null ? check : null;
  const trainable = useMemo(() => (checked?.spec ? presetsFor(presets, checked.spec.family) : []), [presets, checked]);
  // The person's pick while it fits this env; otherwise the first preset that does.
  const presetId = trainable.some((p) => p.id === chosen) ? chosen : (trainable[0]?.id ?? '');
  const name = savedName(text, checked?.spec?.title ?? null);
  const savedCode = useSavedCodeEnvs(text, name);
  const locked = pending !== null;

  // Run, or the person's own code (last saved) back in the editor with the link's or file's code dropped unrun.
  const settle = (runIt: boolean) => {
    if (pending === 'link') onIncomingSettled?.();
    setPending(null);
    if (runIt) void checkReviewed();
    else replace(ownCode());
  };
  const openFile = async (file: File) => {
    replace(await file.text());
    savedCode.setSavedId(null);
    setPending('file');
  };
  const openCode = (code: string) => {
    setText(code);
    void save(code);
  };

  const problems: readonly CodeEnvProblem[] = check && check.code === text ? check.problems : [];
  return (
    <div className="code-env-panel" data-testid="code-env-panel">
      {pending && <ReviewBanner from={pending} onRun={() => settle(true)} onKeepOwn={() => settle(false)} />}
      <CodeEnvToolbar
        text={text}
        locked={locked}
        replaces={savedCode.savedId !== null}
        onExample={(code) => {
          savedCode.setSavedId(null);
          openCode(code);
        }}
        onOpenFile={(f) => void openFile(f)}
        onSaveInBrowser={() => void savedCode.saveInBrowser()}
        onExport={() => download(codeFileName(name), text, 'text/javascript')}
      />
      <SavedCodeList
        saved={savedCode.saved}
        locked={locked}
        onOpen={(d) => {
          // The person's own code, saved by them: checked at once, no review banner.
          const code = savedCode.readSaved(d);
          if (code !== null) openCode(code);
        }}
        onDelete={savedCode.remove}
      />
      <CodeEditor text={text} readOnly={locked} problems={problems} onChange={setText} />
      <div className="code-env-row">
        <button type="button" className="btn btn-primary" disabled={locked || busy !== null} onClick={() => void save()} data-testid="code-env-save">
          Save and check
        </button>
        <span role="status" aria-live="polite" data-testid="code-env-check-status">
          {checkStatus(busy, locked, check, text, checked, problems.length)}
        </span>
      </div>
      {failure && (
        <p className="code-env-error" role="alert" data-testid="code-env-failure">
          {failure}
        </p>
      )}
      {problems.length > 0 && <ProblemList problems={problems} />}
      {checked?.spec && (
        <>
          <CodePlay key={checked.code} code={checked.code} spec={checked.spec} />
          <RandomAgentSection busy={busy !== null} random={random} onRun={() => void randomAgent()} />
          <TrainSection spec={checked.spec} trainable={trainable} presetId={presetId} busy={busy !== null} onPreset={setPresetId} onTrain={() => void trainOnCode(checked.code, presetId, onTrain)} />
        </>
      )}
    </div>
  );
}
