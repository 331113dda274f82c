/** The watchdog's verdicts on a fake clock, and the progress beacon's throttling. */
import { describe, expect, it } from 'vitest';
import { isProgressMessage, progressBeacon, PROGRESS_MESSAGE, seconds, Watchdog, type ProgressMessage } from './liveness.ts';

/** A watchdog on a fake clock: `advance(ms)` moves time in check-sized steps (or one jump). */
function harness(o: { limitMs?: number; everyMs?: number; answers?: 'always' | 'never' | 'manual'; probe?: boolean } = {}) {
  let t = 0;
  let tick: (() => void) | null = null;
  const every = o.everyMs ?? 2000;
  const dead: { silentMs: number; stage: string | null }[] = [];
  let pending: (() => void) | null = null;
  let probes = 0;
  const answers = o.answers ?? 'always';
  const dog = new Watchdog({
    everyMs: every,
    limitMs: () => o.limitMs ?? 30_000,
    probe:
      o.probe === false
        ? undefined
        : () => {
            probes++;
            if (answers === 'always') return Promise.resolve(true);
            return new Promise<void>((resolve) => answers === 'manual' && (pending = resolve));
          },
    onSilent: (silentMs, stage) => dead.push({ silentMs, stage }),
    now: () => t,
    setInterval: (fn) => (tick = fn),
    clearInterval: () => (tick = null),
  });
  const flush = () => new Promise<void>((r) => setTimeout(r, 0));
  return {
    dog,
    dead,
    get probes() {
      return probes;
    },
    /** Time passes with the checks on time. */
    async run(ms: number, each?: (t: number) => void) {
      for (let k = 0; k < ms / every; k++) {
        t += every;
        each?.(t);
        tick?.();
        await flush();
      }
    },
    /** The checking thread was stalled: one check after `ms`. */
    async jump(ms: number) {
      t += ms;
      tick?.();
      await flush();
    },
    answer() {
      pending?.();
      pending = null;
    },
    get ticking() {
      return tick !== null;
    },
  };
}

describe('Watchdog', () => {
  it('a worker that answers its pings lives; one that stops answering is dead after the limit, with its last stage', async () => {
    const h = harness({ answers: 'manual' });
    h.dog.progress('policy inference');
    for (let k = 0; k < 30; k++) {
      await h.run(2000);
      h.answer();
      await new Promise((r) => setTimeout(r, 0));
    }
    expect(h.dead).toEqual([]);
    // From now on nothing answers: the probe sent at the next check waits for ever.
    await h.run(30_000);
    expect(h.dead).toEqual([]);
    await h.run(4000);
    expect(h.dead).toHaveLength(1);
    expect(h.dead[0].silentMs).toBeGreaterThan(30_000);
    expect(h.dead[0].stage).toBe('policy inference');
    expect(h.dog.watching).toBe(false);
    expect(h.ticking).toBe(false);
  });

  it('a worker busy in one synchronous stretch (pings unanswered) lives while it posts progress, and dies when the progress stops', async () => {
    const h = harness({ answers: 'never' });
    await h.run(120_000, () => h.dog.progress('scoring reward terms (episodes 9–16 of 64)'));
    expect(h.dead).toEqual([]);
    expect(h.probes).toBe(1);
    await h.run(32_000);
    expect(h.dead).toEqual([{ silentMs: 32_000, stage: 'scoring reward terms (episodes 9–16 of 64)' }]);
  });

  it('a check that runs late (the page itself was stalled, or the machine slept) judges nothing; the next one on time does', async () => {
    const h = harness({ answers: 'never' });
    await h.run(2000); // the probe goes out, never to be answered
    await h.jump(60_000);
    expect(h.dead).toEqual([]);
    await h.run(2000);
    expect(h.dead).toHaveLength(1);
  });

  it('checks throttled to once a minute (a hidden tab) with a worker that answers at once: never dead', async () => {
    const h = harness({ answers: 'always' });
    for (let k = 0; k < 10; k++) await h.jump(60_000);
    expect(h.dead).toEqual([]);
    expect(h.probes).toBe(10);
  });

  it('without probes: dead after the limit without progress', async () => {
    const h = harness({ probe: false, limitMs: 10_000 });
    await h.run(8000, () => h.dog.progress('x'));
    await h.run(10_000);
    expect(h.dead).toEqual([]);
    await h.run(2000);
    expect(h.dead).toEqual([{ silentMs: 12_000, stage: 'x' }]);
  });

  it('the limit is read at every check (a longer one while the worker builds a run)', async () => {
    let limit = 120_000;
    let t = 0;
    let tick: () => void = () => undefined;
    const dead: number[] = [];
    new Watchdog({ everyMs: 2000, limitMs: () => limit, probe: () => new Promise(() => undefined), onSilent: (ms) => dead.push(ms), now: () => t, setInterval: (fn) => (tick = fn), clearInterval: () => undefined });
    for (let k = 0; k < 30; k++) {
      t += 2000;
      tick();
    }
    expect(dead).toEqual([]);
    limit = 30_000;
    t += 2000;
    tick();
    expect(dead).toEqual([62_000]);
  });

  it('stop() ends the checks', async () => {
    const h = harness({ answers: 'never' });
    h.dog.stop();
    expect(h.ticking).toBe(false);
    await h.jump(100_000);
    expect(h.dead).toEqual([]);
  });
});

describe('progressBeacon', () => {
  it('posts at most one message per interval, with the stage current then', () => {
    let t = 0;
    const sent: ProgressMessage[] = [];
    const beacon = progressBeacon((m) => sent.push(m), { everyMs: 500, now: () => t });
    for (let k = 0; k < 100; k++) {
      beacon(`step ${k}`);
      t += 10;
    }
    expect(sent.map((m) => m.stage)).toEqual(['step 0', 'step 50']);
    expect(sent.every(isProgressMessage)).toBe(true);
    expect(sent[0].type).toBe(PROGRESS_MESSAGE);
    expect(isProgressMessage({ id: 'x', type: 'APPLY' })).toBe(false);
    expect(isProgressMessage(null)).toBe(false);
  });

  it('seconds() formats durations for messages', () => {
    expect(seconds(30_000)).toBe('30 s');
    expect(seconds(2160)).toBe('2.2 s');
    expect(seconds(5000)).toBe('5 s');
  });
});
