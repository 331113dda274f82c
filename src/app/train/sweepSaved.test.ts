import { describe, expect, it } from 'vitest';
import '../../core/envs/index.ts';
import { parseRunConfig, type RunConfig } from '../../core/presets/schema.ts';
import { clearSweep, interruptedSweep, interruptedText, loadSweep, saveSweep, saveSweepStates, SWEEP_JOBS_KEY, SWEEP_STATES_KEY } from './sweepSaved.ts';
import type { SweepRunJob } from './sweepRunner.ts';

/** localStorage's contract over a Map, with a quota in characters (as a full browser storage refuses a write). */
function memoryStorage(quota = Infinity) {
  const m = new Map<string, string>();
  return {
    m,
    getItem: (k: string) => m.get(k) ?? null,
    setItem: (k: string, v: string) => {
      const used = [...m].reduce((n, [key, val]) => n + (key === k ? 0 : val.length), 0);
      if (used + v.length > quota) throw new DOMException('full', 'QuotaExceededError');
      m.set(k, v);
    },
    removeItem: (k: string) => void m.delete(k),
  };
}

const config = (seed: number) => {
  const r = parseRunConfig({ id: 'g', env: { id: 'grid/empty-5x5' }, model: { kind: 'mlp' }, algo: { algo: 'grpo' }, seed });
  if (!r.ok) throw new Error(r.messages.join('; '));
  return r.config as RunConfig;
};
const jobs: SweepRunJob[] = [1, 2, 3, 4].map((seed) => ({ name: `g · seed ${seed}`, configName: 'g', configKey: 'g', seed, config: config(seed) }));

describe('a tab sweep kept across a reload', () => {
  it('says what finished, what was cut off and what never started, and keeps the runs left to train', () => {
    const st = memoryStorage();
    expect(saveSweep({ tag: 'sweep T · g', slots: 1, jobs, states: jobs.map(() => 'queued') }, st)).toBe(true);
    saveSweepStates(['done', 'running', 'queued', 'queued'], st);
    const saved = loadSweep(st)!;
    const x = interruptedSweep(saved)!;
    expect([x.total, x.done, x.failed, x.cut.map((j) => j.seed), x.queued.map((j) => j.seed)]).toEqual([4, 1, 0, [2], [3, 4]]);
    // The configs come back whole: a resume trains exactly what was queued.
    expect(x.queued[0].config).toEqual(jobs[2].config);
    expect(interruptedText(x)).toBe('The page was reloaded while the sweep “sweep T · g” ran: 1 of 4 runs had finished; 1 run was cut off mid-run (saved in Runs up to their last iteration, listed as interrupted); 2 runs had not started.');
  });

  it('nothing to offer once every run ended (done, failed, or stopped by Stop) or after clearing', () => {
    const st = memoryStorage();
    saveSweep({ tag: 't', slots: 2, jobs, states: ['done', 'failed', 'stopped', 'done'] }, st);
    expect(interruptedSweep(loadSweep(st)!)).toBeNull();
    clearSweep(st);
    expect(loadSweep(st)).toBeNull();
  });

  it('a run whose config is no longer accepted is named and left out of the resume', () => {
    const st = memoryStorage();
    const bad = { ...jobs[3], config: { ...jobs[3].config, algo: { ...jobs[3].config.algo, lr: -1 } } as RunConfig };
    saveSweep({ tag: 't', slots: 1, jobs: [...jobs.slice(0, 3), bad], states: ['done', 'done', 'queued', 'queued'] }, st);
    const x = interruptedSweep(loadSweep(st)!)!;
    expect(x.queued.map((j) => j.seed)).toEqual([3]);
    expect(x.invalid).toEqual([expect.stringMatching(/^g · seed 4: algo\.lr/)]);
  });

  it('garbage in storage is dropped, not thrown; a full storage refuses the save (the caller says so)', () => {
    const st = memoryStorage();
    st.m.set(SWEEP_JOBS_KEY, '{"version":1,"tag":"t","slots":1,"jobs":[{"name":1}]}');
    st.m.set(SWEEP_STATES_KEY, '["queued"]');
    expect(loadSweep(st)).toBeNull();
    expect(st.m.size).toBe(0);
    st.m.set(SWEEP_JOBS_KEY, 'not json');
    expect(loadSweep(st)).toBeNull();
    const tiny = memoryStorage(100);
    expect(saveSweep({ tag: 't', slots: 1, jobs, states: jobs.map(() => 'queued') }, tiny)).toBe(false);
    expect(tiny.m.size).toBe(0);
  });
});
