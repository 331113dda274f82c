/**
 * The map check's bounds, with a worker that never answers (the page's Worker replaced by a
 * stand-in that takes comlink's messages and says nothing): past its time limit the check is
 * rejected with the reason and its worker terminated; a cancelled one (a newer edit) likewise,
 * as CheckCancelled; the next call gets a fresh worker. Without the bound such a check showed
 * "Checking…" for good (131 s and counting on a 25×25 map with 4 doors).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAP } from '../../../core/envs/grid/mapSpec.ts';
import { CheckCancelled, checkMapOffPage } from './mapClient.ts';

/** A worker that receives and never replies; records what was made and terminated. */
class SilentWorker extends EventTarget {
  static made: SilentWorker[] = [];
  terminated = false;
  constructor(
    readonly url: URL,
    readonly options: WorkerOptions,
  ) {
    super();
    SilentWorker.made.push(this);
  }
  postMessage(): void {}
  start(): void {}
  terminate(): void {
    this.terminated = true;
  }
}

const g = globalThis as { Worker?: unknown };
let saved: unknown;
beforeEach(() => {
  saved = g.Worker;
  g.Worker = SilentWorker;
  SilentWorker.made = [];
});
afterEach(() => {
  g.Worker = saved;
});

describe('map check bounds', () => {
  it('a check past its time limit is stopped with the reason, its worker terminated; the next check gets a new worker', async () => {
    await expect(checkMapOffPage(DEFAULT_MAP, undefined, 50)).rejects.toThrow(/^the check took longer than 0\.05 s and was stopped; the map is not known to be solvable/);
    expect(SilentWorker.made).toHaveLength(1);
    expect(SilentWorker.made[0].terminated).toBe(true);
    const next = checkMapOffPage(DEFAULT_MAP, undefined, 50);
    expect(SilentWorker.made).toHaveLength(2);
    await expect(next).rejects.toThrow(/took longer/);
  });

  it('a cancelled check (a newer edit) is rejected as CheckCancelled and its worker terminated at once', async () => {
    const cancel = new AbortController();
    const p = checkMapOffPage(DEFAULT_MAP, cancel.signal, 60_000);
    cancel.abort();
    await expect(p).rejects.toBeInstanceOf(CheckCancelled);
    expect(SilentWorker.made[0].terminated).toBe(true);
    // Already aborted: no worker is made.
    await expect(checkMapOffPage(DEFAULT_MAP, cancel.signal)).rejects.toBeInstanceOf(CheckCancelled);
    expect(SilentWorker.made).toHaveLength(1);
  });
});
