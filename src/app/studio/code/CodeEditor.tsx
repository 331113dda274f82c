/**
 * The code env editor: CodeMirror 6 with JavaScript highlighting, the check's problems as error
 * markers on their lines, and a read-only mode (code that came in a link or a file is shown for
 * review and cannot be edited or run until the person presses Run).
 */
import { useEffect, useRef } from 'react';
import { basicSetup, EditorView } from 'codemirror';
import { Compartment, EditorState } from '@codemirror/state';
import { javascript } from '@codemirror/lang-javascript';
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import type { CodeEnvProblem } from '../../../core/envs/code/index.ts';

export interface CodeEditorProps {
  text: string;
  readOnly: boolean;
  problems: readonly CodeEnvProblem[];
  onChange: (text: string) => void;
}

export function CodeEditor({ text, readOnly, problems, onChange }: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const ro = useRef(new Compartment());
  const changed = useRef(onChange);
  useEffect(() => {
    changed.current = onChange;
  }, [onChange]);
  useEffect(() => {
    const v = new EditorView({
      doc: text,
      parent: host.current!,
      extensions: [
        basicSetup,
        javascript(),
        lintGutter(),
        ro.current.of([EditorState.readOnly.of(readOnly), EditorView.editable.of(!readOnly)]),
        EditorView.contentAttributes.of({ 'aria-label': 'Env code: a JavaScript module exporting env, reset(seed) and step(action)' }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) changed.current(u.state.doc.toString());
        }),
      ],
    });
    // The scroller scrolls long code: focusable, so the keyboard can reach and scroll it.
    v.scrollDOM.tabIndex = 0;
    v.scrollDOM.setAttribute('aria-label', 'Env code editor (scrolls)');
    view.current = v;
    return () => v.destroy();
    // The editor is made once; text and mode changes arrive through the effects below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== text) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text } });
  }, [text]);
  useEffect(() => {
    view.current?.dispatch({ effects: ro.current.reconfigure([EditorState.readOnly.of(readOnly), EditorView.editable.of(!readOnly)]) });
  }, [readOnly]);
  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const diags: Diagnostic[] = problems.map((p) => {
      const line = v.state.doc.line(Math.min(Math.max(1, p.line ?? 1), v.state.doc.lines));
      return { from: line.from, to: line.to, severity: 'error', message: p.message };
    });
    v.dispatch(setDiagnostics(v.state, diags));
  }, [problems]);
  return <div className="code-env-editor" data-testid="code-env-editor" ref={host} />;
}
