/**
 * A tool env as a chat: the task, the agent's calls, tool replies, errors and the final verdict,
 * each styled distinctly and annotated with the simulated latency of the call. A student plays
 * by typing calls; the side panel shows the budget (turns left), malformed calls and reward.
 */
import { useEffect, useRef, useState, type RefObject } from 'react';
import type { EnvSpec, ToolObs, TranscriptMessage } from '../../core/envs/types.ts';
import { isOver, type Actor, type Episode } from '../state/episode.ts';
import { useStore } from '../store.ts';
import { formatReward } from './EpisodeStatus.tsx';
import { toolsFromTask } from './toolText.ts';

interface Row {
  msg: TranscriptMessage;
  /** 1-based step that produced the message; 0 for the task. */
  step: number;
  latencyMs: number | null;
  by: Actor | null;
}

/** Attributes each transcript message to the step that added it, via the per-step snapshots. */
function rows(ep: Episode): Row[] {
  const frames = ep.snapshots.map((s) => (s.frame.kind === 'transcript' ? s.frame.messages : []));
  const last = frames[frames.length - 1];
  const out: Row[] = [];
  let step = 0;
  for (let i = 0; i < last.length; i++) {
    while (step < frames.length - 1 && i >= frames[step].length) step++;
    const rec = step > 0 ? ep.steps[step - 1] : undefined;
    const lat = rec?.info.latencyMs;
    out.push({ msg: last[i], step, latencyMs: typeof lat === 'number' && lat > 0 ? lat : null, by: rec?.by ?? null });
  }
  return out;
}

const ROLE_NAMES: Record<TranscriptMessage['role'], string> = {
  task: 'Task',
  agent: 'Agent',
  tool: 'Tool',
  error: 'Error',
  result: 'Result',
};

function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}

function ClockIcon() {
  return (
    <svg width="11" height="11" viewBox="0 0 16 16" aria-hidden>
      <circle cx="8" cy="8" r="6.5" fill="none" stroke="currentColor" strokeWidth="1.6" />
      <path d="M8 4.2V8l2.6 1.6" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" />
    </svg>
  );
}

function Transcript({ ep }: { ep: Episode }) {
  const list = useRef<HTMLOListElement>(null);
  const all = rows(ep);
  useEffect(() => {
    const el = list.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [all.length]);
  return (
    <ol className="transcript" data-testid="transcript" ref={list} aria-label="Transcript" aria-live="polite">
      {all.map((r, i) => {
        const resultTone = r.msg.role === 'result' ? (ep.success === true ? ' msg-success' : ' msg-failure') : '';
        return (
          <li key={i} className={`msg msg-${r.msg.role}${resultTone}${r.by ? ` by-${r.by}` : ''}`} data-role={r.msg.role}>
            <div className="msg-meta">
              <span className="msg-role">{r.msg.role === 'agent' && r.by === 'expert' ? 'Expert' : r.msg.role === 'agent' && r.by === 'agent' ? 'Agent' : r.msg.role === 'agent' ? 'You' : ROLE_NAMES[r.msg.role]}</span>
              {r.step > 0 && r.msg.role === 'agent' && <span className="msg-turn">turn {r.step}</span>}
              {r.latencyMs !== null && r.msg.role !== 'agent' && (
                <span className="msg-latency" title="Simulated time this tool call took">
                  <ClockIcon /> {formatMs(r.latencyMs)}
                </span>
              )}
            </div>
            <div className="msg-body">{r.msg.text}</div>
          </li>
        );
      })}
    </ol>
  );
}

interface ToolInputProps {
  spec: EnvSpec;
  over: boolean;
  text: string;
  setText: (t: string) => void;
  inputRef: RefObject<HTMLInputElement | null>;
}

function ToolInput({ spec, over, text, setText, inputRef }: ToolInputProps) {
  const act = useStore((s) => s.act);
  const [history, setHistory] = useState<string[]>([]);
  /** Position while browsing history with ↑/↓; history.length means "the line being typed". */
  const [cursor, setCursor] = useState(0);
  const [draft, setDraft] = useState('');
  const maxLength = spec.actionSpace.kind === 'text' ? spec.actionSpace.maxLength : undefined;

  const send = () => {
    if (over) return;
    useStore.getState().setPlaying(false);
    if (act(text, 'you')) {
      const h = text.trim() && history[history.length - 1] !== text ? [...history, text] : history;
      setHistory(h);
      setCursor(h.length);
      setText('');
      setDraft('');
    }
  };
  const browse = (delta: number) => {
    const next = Math.max(0, Math.min(history.length, cursor + delta));
    if (next === cursor) return;
    if (cursor === history.length) setDraft(text);
    setCursor(next);
    setText(next === history.length ? draft : history[next]);
  };

  return (
    <form
      className="tool-form"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      <input
        ref={inputRef}
        data-testid="tool-input"
        className="tool-input"
        value={text}
        maxLength={maxLength}
        disabled={over}
        spellCheck={false}
        autoComplete="off"
        autoFocus
        aria-label="Your tool call"
        placeholder={over ? 'Episode over: Reset or New seed to play again' : 'Type one tool call, e.g. calc(12*7) or answer(84), then Enter'}
        onChange={(e) => {
          setText(e.target.value);
          setCursor(history.length);
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
            e.preventDefault();
            browse(e.key === 'ArrowUp' ? -1 : 1);
          }
        }}
      />
      <button type="submit" className="btn btn-primary" data-testid="tool-send" disabled={over}>
        Send
      </button>
    </form>
  );
}

export function ToolView({ spec, episode }: { spec: EnvSpec; episode: Episode }) {
  const [text, setText] = useState('');
  const inputRef = useRef<HTMLInputElement>(null);
  const over = isOver(episode);
  const used = episode.steps.length;
  const latencies = episode.steps.map((s) => s.info.latencyMs).filter((x): x is number => typeof x === 'number' && x > 0);
  const totalLatency = latencies.reduce((a, b) => a + b, 0);
  const obs = episode.snapshots[episode.snapshots.length - 1].obs as ToolObs | undefined;
  const failed = episode.steps.filter((s) => s.info.toolFailed).length;
  const first = episode.snapshots[0].frame;
  const task = first.kind === 'transcript' ? (first.messages.find((m) => m.role === 'task')?.text ?? '') : '';
  const tools = toolsFromTask(task);

  return (
    <div className="tool-view">
      <section className="panel chat-panel" aria-label="Conversation">
        <Transcript ep={episode} />
        <ToolInput spec={spec} over={over} text={text} setText={setText} inputRef={inputRef} />
        <p className="muted small tool-hint">
          One call per turn{spec.actionSpace.kind === 'text' ? `, at most ${spec.actionSpace.maxLength} characters` : ''}. A malformed
          call still uses a turn. <kbd>↑</kbd>/<kbd>↓</kbd> recall earlier calls.
        </p>
      </section>

      <aside className="panel tool-side" aria-label="Episode budget">
        <dl className="facts" data-testid="tool-facts">
          <div>
            <dt>Turns left</dt>
            <dd data-testid="turns-left">
              {Math.max(0, spec.maxSteps - used)}
              <span className="muted"> of {spec.maxSteps}</span>
            </dd>
          </div>
          <div>
            <dt>Malformed calls</dt>
            <dd data-testid="malformed-count" className={episode.malformed > 0 ? 'warn-text' : ''}>
              {episode.malformed}
            </dd>
          </div>
          <div>
            <dt>Tool failures</dt>
            <dd>{failed}</dd>
          </div>
          <div>
            <dt>Reward so far</dt>
            <dd>{formatReward(episode.totalReward)}</dd>
          </div>
          <div>
            <dt>Simulated tool time</dt>
            <dd title="Sum of the simulated latency of every tool call">
              {formatMs(totalLatency)}
              {latencies.length > 0 && <span className="muted"> · {latencies.length} calls</span>}
            </dd>
          </div>
        </dl>
        {tools.length > 0 && (
          <div className="tool-list">
            <h4>Tools</h4>
            <div className="tool-chips">
              {tools.map((t) => (
                <button
                  key={t}
                  type="button"
                  className="tool-chip"
                  disabled={over}
                  title={`Start typing ${t.slice(0, t.indexOf('(') + 1)}`}
                  onClick={() => {
                    setText(t.slice(0, t.indexOf('(') + 1));
                    inputRef.current?.focus();
                  }}
                >
                  {t}
                </button>
              ))}
            </div>
          </div>
        )}
        <figure className="obs-text-box">
          <figcaption>What the agent reads now</figcaption>
          <pre className="obs-text" data-testid="obs-text">
            {obs?.text ?? ''}
          </pre>
        </figure>
      </aside>
    </div>
  );
}
