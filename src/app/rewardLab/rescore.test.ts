/**
 * Re-scoring's page side: the recent batches the slice hands over, freezing the ones scored by
 * the current code version, and opening a frozen episode in the trajectory inspector.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { GridEpisodeView, IterationView, TokenEpisodeView } from '../../runtime/trainWorker/types.ts';
import { useStore } from '../store.ts';
import { clearRecentBatches, noteBatch, RECENT_BATCHES, recentBatches, useRecentBatches } from './recentBatches.ts';
import { freezeBuffer, openFrozenEpisode, useRescore } from './rescore.ts';
import { useRewardLab } from './rewardLab.ts';

const gridEp = (seed: number, group: number, T: number): GridEpisodeView => ({
  kind: 'grid',
  seed,
  group,
  reward: 0.5,
  advantage: group === 0 ? 1 : -1,
  terminated: false,
  truncated: true,
  success: false,
  actions: new Int32Array(T).fill(2),
  logprobs: new Float32Array(T),
  entropies: new Float32Array(T),
  values: new Float32Array(T),
  versions: new Int32Array(T),
  rewards: new Float64Array(T),
});
const tokenEp = (seed: number, group: number): TokenEpisodeView => ({
  kind: 'tokens',
  seed,
  group,
  reward: 1,
  advantage: 0.5,
  terminated: true,
  truncated: false,
  success: true,
  // <bos> <obs> q · 3 policy tokens · <obs> r · 2 policy tokens
  tokens: new Int32Array(9),
  lossMask: Uint8Array.from([0, 0, 0, 1, 1, 1, 0, 1, 1]),
  logprobs: new Float32Array(9),
  entropies: new Float32Array(9),
  versions: new Int32Array(9),
  rewards: Float64Array.from([0, 1]),
  actions: ['calc(1+1)', 'answer(2)'],
  infos: [{ toolCall: 'calc' }, { toolCall: 'answer' }],
  observations: ['what is 1+1?', '2', ''],
  transcript: '',
  contextLimited: false,
  forcedEnds: 0,
});
const batch = (iteration: number): IterationView => ({ iteration, metrics: {}, allApplied: true, wallS: 0, episodes: [gridEp(iteration * 10, 0, 3), gridEp(iteration * 10 + 1, 1, 4)] });

beforeEach(() => {
  clearRecentBatches();
  useRescore.setState({ frozen: null, answer: null, error: null, note: null });
  useRewardLab.setState({ versions: [] });
  useStore.getState().choosePreset('grid-empty-8x8-grpo');
  useStore.setState({ running: useStore.getState().draft });
});

describe('recent batches', () => {
  it('keeps the newest few grid batches and starts over when the iteration goes back (a new run)', () => {
    for (let i = 0; i < RECENT_BATCHES + 3; i++) noteBatch(batch(i));
    expect(recentBatches().map((b) => b.iteration)).toEqual(Array.from({ length: RECENT_BATCHES }, (_, k) => k + 3));
    expect(useRecentBatches.getState().available).toEqual({ batches: RECENT_BATCHES, episodes: 2 * RECENT_BATCHES, first: 3, last: RECENT_BATCHES + 2 });
    noteBatch(batch(0));
    expect(recentBatches().map((b) => b.iteration)).toEqual([0]);
    // Empty batches are ignored.
    noteBatch({ ...batch(1), episodes: [] });
    expect(recentBatches()).toHaveLength(1);
    // A token batch after grid ones is another run's: the list starts over with it.
    noteBatch({ ...batch(1), episodes: [tokenEp(1, 0)] });
    expect(recentBatches().map((b) => [b.iteration, b.kind])).toEqual([[1, 'tokens']]);
  });
});

describe('freezing', () => {
  it('copies the last N batches scored by the current code version, and opens an episode in the inspector', () => {
    for (let i = 0; i < 5; i++) noteBatch(batch(i));
    // v2 took over at iteration 3 (0-based): iterations 0–2 were scored by other code.
    useRewardLab.setState({ versions: [{ version: 1, iteration: 0, terms: [], code: '' }, { version: 2, iteration: 3, terms: ['a'], code: '' }] });
    freezeBuffer(4);
    const f = useRescore.getState().frozen!;
    expect(f.iterations).toEqual([3, 4]);
    expect(f.version).toBe(2);
    expect(f.envId).toBe('grid/empty-8x8');
    expect(f.episodes.map((e) => [e.iteration, e.index, e.seed, e.group, e.actions.length])).toEqual([
      [3, 0, 30, 0, 3],
      [3, 1, 31, 1, 4],
      [4, 0, 40, 0, 3],
      [4, 1, 41, 1, 4],
    ]);
    openFrozenEpisode(3);
    expect(useStore.getState().tab).toBe('trajectories');
    expect(useStore.getState().inspect?.batch.iteration).toBe(4);
    expect(useStore.getState().inspect?.index).toBe(1);
  });

  it('freezes token batches with their turns (actions, infos, observations) and policy-token counts', () => {
    noteBatch({ iteration: 0, metrics: {}, allApplied: true, wallS: 0, episodes: [tokenEp(7, 0), tokenEp(7, 0)] });
    freezeBuffer(4);
    const f = useRescore.getState().frozen!;
    expect(f.episodes).toHaveLength(2);
    expect(f.episodes[0]).toMatchObject({ iteration: 0, seed: 7, actions: [], rewards: [0, 1], total: 1, advantage: 0.5 });
    expect(f.episodes[0].text).toEqual({ actions: ['calc(1+1)', 'answer(2)'], infos: [{ toolCall: 'calc' }, { toolCall: 'answer' }], observations: ['what is 1+1?', '2', ''], terminated: true, truncated: false, policyTokens: 5 });
  });

  it('says why when nothing can be frozen', () => {
    freezeBuffer(4);
    expect(useRescore.getState().frozen).toBeNull();
    expect(useRescore.getState().note).toMatch(/train for an iteration or two/);
    noteBatch(batch(0));
    useRewardLab.setState({ versions: [{ version: 3, iteration: 1, terms: [], code: '' }] });
    freezeBuffer(4);
    expect(useRescore.getState().note).toMatch(/No batch scored by the current code \(v3\) yet/);
  });
});
