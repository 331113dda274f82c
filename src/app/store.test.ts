import { beforeEach, describe, expect, it } from 'vitest';
import { useStore } from './store.ts';
import { capNotice } from './state/sharedSlices.ts';
import { isOver } from './state/episode.ts';

const s = () => useStore.getState();

beforeEach(() => {
  useStore.setState({ notices: [], envId: null, env: null, episode: null, seed: 0, kwargs: {}, playing: false });
});

describe('viewer store', () => {
  it('lists every registered env with a spec', () => {
    const ids = s().catalog.map((c) => c.id);
    expect(ids).toContain('grid/empty-5x5');
    expect(ids).toContain('tools/calculator');
    expect(s().catalog.every((c) => c.spec !== null)).toBe(true);
  });

  it('falls back to the default env with a message for an unknown id', () => {
    s().open({ envId: 'grid/nope', seed: 4 });
    expect(s().envId).toBe('grid/empty-5x5');
    expect(s().seed).toBe(4);
    expect(s().episode?.seed).toBe(4);
    expect(s().notices.map((n) => n.text)).toEqual(['There is no environment "grid/nope"; showing grid/empty-5x5 instead.']);
  });

  it('drops bad kwargs with a message naming them, and keeps the env', () => {
    s().open({ envId: 'grid/empty-8x8', kwargs: { bogus: 1 } });
    expect(s().envId).toBe('grid/empty-8x8');
    expect(s().kwargs).toEqual({});
    expect(s().notices[0].text).toMatch(/bogus/);
  });

  it('plays the expert to the end, then refuses further steps without throwing', () => {
    s().open({ envId: 'grid/empty-5x5', seed: 2 });
    let guard = 0;
    while (s().expertStep() && guard++ < 200);
    const ep = s().episode!;
    expect(isOver(ep)).toBe(true);
    expect(ep.success).toBe(true);
    expect(s().act(2)).toBe(false);
    expect(s().expertStep()).toBe(false);
    expect(s().notices.filter((n) => n.level === 'error')).toEqual([]);
  });

  it('steps back by replaying and resets to the same start', () => {
    s().open({ envId: 'tools/kv-lookup', seed: 9 });
    const start = s().episode!.snapshots[0];
    s().act('lookup(x)');
    s().act('nonsense');
    expect(s().episode!.malformed).toBe(1);
    s().stepBack();
    expect(s().episode!.steps.map((st) => st.action)).toEqual(['lookup(x)']);
    expect(s().episode!.malformed).toBe(0);
    s().reset();
    expect(s().episode!.steps).toHaveLength(0);
    expect(s().episode!.snapshots[0].frame).toEqual(start.frame);
  });

  it('new seed picks a different seed and restarts', () => {
    s().open({ envId: 'grid/four-rooms', seed: 1 });
    s().act(2);
    s().newSeed();
    expect(s().seed).not.toBe(1);
    expect(s().episode!.steps).toHaveLength(0);
    expect(s().episode!.seed).toBe(s().seed);
  });
});

describe('notices', () => {
  it('show at most 200 characters, then an ellipsis; repeated messages once', () => {
    useStore.setState({ notices: [] });
    const long = 'x'.repeat(100_000);
    useStore.getState().notify('warning', `Ignored part of the link: ${long}`);
    useStore.getState().notify('warning', `Ignored part of the link: ${long}`);
    const shown = useStore.getState().notices;
    expect(shown).toHaveLength(1);
    expect(shown[0].text).toHaveLength(201);
    expect(shown[0].text.endsWith('x…')).toBe(true);
    expect(capNotice('short')).toBe('short');
  });
});
