/** Trainer.release frees every part even when one part's release fails. */
import { describe, expect, it } from 'vitest';
import { Trainer, type TrainerParts } from './trainer.ts';

describe('Trainer.release', () => {
  it('frees the objective and the learner when the collector fails to release, and rethrows that failure', async () => {
    const freed: string[] = [];
    const part = (name: string, fails = false) => ({
      release: async () => {
        freed.push(name);
        if (fails) throw new Error(`${name} release failed`);
      },
    });
    const parts = { algo: {}, scheduler: {}, rewards: {}, collector: part('collector', true), objective: part('objective', true), learner: part('learner') } as unknown as TrainerParts<never, never>;
    await expect(new Trainer(parts).release()).rejects.toThrow('collector release failed');
    expect(freed).toEqual(['collector', 'objective', 'learner']);
  });
});
