/**
 * A staged run on the dashboard (ARCHITECTURE.md, 'Staged pipelines'): where each stage begins
 * on the charts' x axis, and what the stage strip says about each stage. Pure, for tests.
 */
import { stageStarts, type Stage } from '../../core/presets/schema.ts';
import { studentLabel } from '../../core/trainer/stagedTrainer.ts';
import type { ChartMarker } from '../ui/MetricChart.tsx';

type StageLike = Pick<Stage, 'name' | 'iterations'> & { distill?: { student: Parameters<typeof studentLabel>[0] } };

/**
 * A marker at the first iteration of every stage after the first (x = iterations done, 1-based),
 * labelled by number only: the stage strip above the charts names them, and a name would not fit
 * beside its line on a chart a third of the page wide (a label near the right edge ends at its
 * line, where it read as the previous marker's).
 */
export function stageMarkers(stages: readonly StageLike[]): ChartMarker[] {
  const starts = stageStarts(stages);
  return stages.slice(1).map((_, i) => ({ x: starts[i + 1], label: `stage ${i + 2}` }));
}

export interface StageRow {
  index: number;
  name: string;
  /** First and last iteration of the stage (1-based, as the charts count). */
  from: number;
  to: number;
  kind: string;
  state: 'done' | 'running' | 'next';
}

/** The strip's rows; `at` is the running stage (1-based `pipeline/stage` of the last iteration), undefined before the first. */
export function stageRows(stages: readonly StageLike[], at: number | undefined): StageRow[] {
  const starts = stageStarts(stages);
  return stages.map((st, k) => ({
    index: k + 1,
    name: st.name,
    from: starts[k],
    to: starts[k] + st.iterations - 1,
    kind: st.distill ? `distill into ${studentLabel(st.distill.student)}` : 'RL',
    state: at === undefined ? 'next' : k + 1 < at ? 'done' : k + 1 === at ? 'running' : 'next',
  }));
}
