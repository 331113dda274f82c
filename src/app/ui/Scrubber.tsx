/** A position slider for replays: "step 4 / 286" or "turn 1 / 2". */
export function Scrubber(props: { value: number; max: number; unit: 'step' | 'turn'; testId: string; onScrub: (value: number) => void }) {
  const { value, max, unit } = props;
  return (
    <div className="scrubber">
      <input
        type="range"
        min={0}
        max={max}
        value={value}
        aria-label={unit === 'step' ? 'Step' : 'Turn'}
        data-testid={props.testId}
        onChange={(e) => props.onScrub(Number(e.target.value))}
      />
      <span className="scrub-pos">
        {unit} <b>{value}</b> / {max}
      </span>
    </div>
  );
}

/** First / previous / play / next / last buttons of a replay at position t of T. */
export function ReplayControls(props: {
  t: number;
  max: number;
  playing: boolean;
  setT: (t: number) => void;
  setPlaying: (p: boolean) => void;
  /** data-testid prefix: `${prefix}-prev`, `-play`, `-next`. */
  prefix: string;
  labels: { first: string; prev: string; next: string; last: string };
}) {
  const { t, max, playing, setT, setPlaying, prefix, labels } = props;
  const atEnd = t >= max;
  return (
    <div className="scrub-controls">
      <button type="button" className="btn" aria-label={labels.first} onClick={() => setT(0)} disabled={t === 0}>
        «
      </button>
      <button type="button" className="btn" aria-label={labels.prev} data-testid={`${prefix}-prev`} onClick={() => setT(Math.max(0, t - 1))} disabled={t === 0}>
        ◀
      </button>
      <button
        type="button"
        className={`btn ${playing ? 'btn-active' : 'btn-primary'}`}
        data-testid={`${prefix}-play`}
        onClick={() => {
          if (atEnd) {
            setT(0);
            setPlaying(true);
          } else setPlaying(!playing);
        }}
      >
        {playing ? 'Pause' : atEnd ? 'Replay' : 'Play'}
      </button>
      <button type="button" className="btn" aria-label={labels.next} data-testid={`${prefix}-next`} onClick={() => setT(Math.min(max, t + 1))} disabled={atEnd}>
        ▶
      </button>
      <button type="button" className="btn" aria-label={labels.last} onClick={() => setT(max)} disabled={atEnd}>
        »
      </button>
    </div>
  );
}
