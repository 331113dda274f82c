/** An inspected episode's heading: its number in the batch, its group (group algorithms) and its seed. */
export function EpisodeHeading({ index, group, seed }: { index: number; group: number; seed: number }) {
  return (
    <h3 className="inspector-title">
      Episode {index + 1}
      {group >= 0 && <span className="muted"> · group {group + 1}</span>} <span className="muted">· seed {seed}</span>
    </h3>
  );
}
