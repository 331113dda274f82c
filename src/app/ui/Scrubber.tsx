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
