/**
 * The reward lab's versions list: one chip per code version of the run (v1, v2, …, with the
 * iteration it took over); choosing one shows its diff against the version before it, or against
 * any other version picked beside it, as a read-only unified CodeMirror merge view.
 */
import { useEffect, useRef, useState } from 'react';
import { basicSetup, EditorView } from 'codemirror';
import { EditorState } from '@codemirror/state';
import { javascript } from '@codemirror/lang-javascript';
import { unifiedMergeView } from '@codemirror/merge';
import { lineChanges } from '../../core/reward/versions.ts';
import type { RewardVersion } from './rewardLab.ts';

/** A read-only unified diff: `code` with the lines it changed from `original` marked. */
function Diff({ original, code }: { original: string; code: string }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const view = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: code,
        extensions: [
          basicSetup,
          javascript(),
          EditorState.readOnly.of(true),
          EditorView.editable.of(false),
          EditorView.contentAttributes.of({ 'aria-label': 'Reward code, with the lines changed from the previous version marked' }),
          unifiedMergeView({ original, mergeControls: false, gutter: true, collapseUnchanged: { margin: 2, minSize: 6 } }),
        ],
      }),
    });
    return () => view.destroy();
  }, [original, code]);
  return <div className="reward-diff-view" ref={host} />;
}

export function RewardVersions({ versions }: { versions: readonly RewardVersion[] }) {
  // The chosen version and the one it is compared with (null = the version before it).
  const [chosen, setChosen] = useState<number | null>(null);
  const [against, setAgainst] = useState<number | null>(null);
  if (versions.length === 0) return null;
  const pick = versions.find((v) => v.version === chosen);
  const i = pick ? versions.indexOf(pick) : -1;
  const base = pick ? (against !== null ? versions.find((v) => v.version === against) : versions[i - 1]) : undefined;
  const ch = pick ? lineChanges(base?.code ?? '', pick.code) : null;
  return (
    <div className="reward-versions" data-testid="reward-versions">
      <div className="reward-version-chips">
        <span className="muted">Versions:</span>
        {versions.map((v) => (
          <button
            key={v.version}
            type="button"
            className={`reward-version-chip${v.version === chosen ? ' is-on' : ''}`}
            data-testid={`reward-version-${v.version}`}
            aria-pressed={v.version === chosen}
            title={`v${v.version} scored the run from iteration ${v.iteration + 1}${v.terms.length ? ` (${v.terms.join(', ')})` : ''}: show what it changed`}
            onClick={() => {
              setChosen(v.version === chosen ? null : v.version);
              setAgainst(null);
            }}
          >
            v{v.version} <span className="muted">@{v.iteration + 1}</span>
          </button>
        ))}
      </div>
      {pick && ch && (
        <div className="reward-diff" data-testid="reward-diff">
          <div className="reward-diff-head">
            <span>
              v{pick.version} against{' '}
              <select
                aria-label="Compare with version"
                data-testid="reward-diff-against"
                value={base?.version ?? 0}
                onChange={(e) => setAgainst(Number(e.currentTarget.value) || 0)}
              >
                <option value={0}>no code</option>
                {versions
                  .filter((v) => v.version !== pick.version)
                  .map((v) => (
                    <option key={v.version} value={v.version}>
                      v{v.version}
                    </option>
                  ))}
              </select>
            </span>
            <span className="muted">
              <span className="reward-diff-added">+{ch.added}</span> <span className="reward-diff-removed">−{ch.removed}</span> lines
            </span>
          </div>
          <Diff original={base?.code ?? ''} code={pick.code} />
        </div>
      )}
    </div>
  );
}
