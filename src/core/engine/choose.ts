/**
 * Picks the engine for a run from measurements (measure.ts), not from what hardware exists:
 * an adapter's presence says nothing about speed (a software WebGPU adapter is ~1000× slower
 * than WASM on our MLP; a real GPU may still lose to WASM on a 250-dispatch MLP step).
 */
import type { EngineTiming } from './measure.ts';

export interface Candidate {
  /** What the caller loads for it: 'wasm' | 'webgpu' in the browser, 'ort-web-wasm' | 'ort-node' in Node. */
  id: string;
  /** Human name with its setting, e.g. 'WASM · 2 threads', 'WebGPU', 'onnxruntime-node'. */
  label: string;
  /** Null when it was not measured, failed, or ran out of budget (see `note`). */
  timing: EngineTiming | null;
  /** Why there is no timing, or what limits it (e.g. 'software adapter: never picked unless forced'). */
  note?: string;
  /** False: shown with its figures but never picked automatically (software adapters). */
  eligible: boolean;
}

export interface EngineDecision {
  /** The chosen candidate's id. */
  chosen: string;
  /** One sentence: why this one. */
  reason: string;
  candidates: Candidate[];
}

const measured = (c: Candidate): c is Candidate & { timing: EngineTiming } => c.timing !== null && Number.isFinite(c.timing.iterationMs);

/**
 * The eligible candidate with the lowest estimated iteration time; `fallback` (an id among the
 * candidates, the one that always works) when none was measured.
 */
export function decide(candidates: Candidate[], fallback: string): EngineDecision {
  const ranked = candidates.filter((c) => c.eligible && measured(c)).sort((a, b) => a.timing!.iterationMs - b.timing!.iterationMs);
  if (ranked.length === 0) {
    return { chosen: fallback, reason: `no backend finished its measurement; ${labelOf(candidates, fallback)} always works`, candidates };
  }
  const best = ranked[0];
  const next = ranked[1];
  let reason: string;
  if (next) {
    const x = next.timing!.iterationMs / best.timing!.iterationMs;
    reason = `${best.label} is ${x >= 10 ? x.toFixed(0) : x.toFixed(1)}× faster than ${next.label} on this run's model (measured)`;
  } else {
    const others = candidates.filter((c) => c !== best);
    reason = others.length ? `only ${best.label} was timed here (${others.map((c) => `${c.label}: ${c.note ?? 'not measured'}`).join('; ')})` : `${best.label} is the only backend here`;
  }
  return { chosen: best.id, reason, candidates };
}

function labelOf(candidates: Candidate[], id: string): string {
  return candidates.find((c) => c.id === id)?.label ?? id;
}

/** Milliseconds with 2–3 significant figures: 0.42, 3.1, 41, 588. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms >= 10) return ms.toFixed(0);
  if (ms >= 1) return ms.toFixed(1);
  return ms.toFixed(2);
}

/** One candidate's figure: '3.1 ms/step', or why there is none. */
export function candidateFigure(c: Candidate): string {
  if (!measured(c)) return c.note ?? 'not measured';
  return `${formatMs(c.timing.trainMs)} ms/step`;
}

/** The status-bar line: the choice first, then the others, e.g. 'WASM · 1 thread · 3.1 ms/step — WebGPU 41 ms/step'. */
export function summarize(d: EngineDecision): string {
  const chosen = d.candidates.find((c) => c.id === d.chosen);
  const others = d.candidates.filter((c) => c.id !== d.chosen);
  const head = chosen ? `${chosen.label} · ${candidateFigure(chosen)}` : d.chosen;
  const other = (c: Candidate) => (measured(c) ? `${c.label} ${candidateFigure(c)}${c.eligible ? '' : ' (not used)'}` : `${c.label}: ${c.note ?? 'not measured'}`);
  return [head, ...others.map(other)].join(' — ');
}
