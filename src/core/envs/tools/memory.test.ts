import { describe, expect, it } from 'vitest';
import { Rng } from '../../util/rng.ts';
import { makeMemory } from './memory.ts';

/** Plays `policy` (sees only the latest observation text) and returns the steps. */
function play(env: ReturnType<typeof makeMemory>, seed: number, policy: (obs: string) => string) {
  let obs = env.reset({ seed }).obs.text;
  const steps = [];
  for (let t = 0; t < env.spec.maxSteps; t++) {
    const a = policy(obs);
    const r = env.step(a);
    steps.push({ a, ...r });
    obs = r.obs.text;
    if (r.terminated || r.truncated) break;
  }
  return steps;
}

describe('tools/memory', () => {
  it('plays a hand-checked expert episode (seed 1): store both facts, skip the rumors, recall, answer', () => {
    const env = makeMemory();
    expect(env.reset({ seed: 1 }).obs.text).toBe(
      'task: facts first, a question last. tools: store(key, value), recall(key), next(), answer(value). notes cost 0.02. fact: ring = 65',
    );
    const steps = [];
    for (let a = env.expertAction(); a !== null; a = env.expertAction()) steps.push({ a, ...env.step(a) });
    expect(steps.map((s) => [s.a, s.obs.text, s.reward])).toEqual([
      ['store(ring, 65)', 'stored ring. fact: drum = 70', -0.02],
      ['store(drum, 70)', 'stored drum. rumor: kite = 10', -0.02],
      ['next()', 'rumor: drum = 69', 0],
      ['next()', 'question: what is drum?', 0],
      ['recall(drum)', 'result: drum = 70', -0.02],
      ['answer(70)', 'done: correct, 70.', 1],
    ]);
    // Progress: each fact stored with its value, and the recall of the asked fact after the question.
    expect(steps.map((s) => s.info.progress)).toEqual([1, 1, undefined, undefined, 1, undefined]);
    expect(steps.map((s) => s.info.toolCall)).toEqual(['store', 'store', 'next', 'next', 'recall', undefined]);
    expect(steps.at(-1)!.info.success).toBe(true);
    // Return = 1 - 3 x 0.02 (two stores and one recall).
    expect(steps.reduce((s, x) => s + x.reward, 0)).toBeCloseTo(0.94, 12);
  });

  it('the baseline (memoryTools false) has no store/recall; its expert reads ahead and answers', () => {
    const env = makeMemory({ memoryTools: false });
    expect(env.reset({ seed: 1 }).obs.text).toBe('task: facts first, a question last. tools: next(), answer(value). fact: ring = 65');
    expect(env.step('store(ring, 65)')).toMatchObject({ reward: 0, info: { malformed: true } });
    expect(env.step('recall(ring)').obs.text).toMatch(/^error: unknown tool "recall"/);
    for (let a = env.expertAction(); a !== null; a = env.expertAction()) {
      const r = env.step(a);
      if (r.terminated) expect(r.info.success).toBe(true);
    }
    expect(env.spec.rewardRange).toEqual([0, 1]);
  });

  it('a policy that sees only the latest observation and keeps no notes is at chance (1/90)', () => {
    // It walks to the question and guesses a two-digit value; the item it needs is gone.
    const env = makeMemory();
    const rng = new Rng(7);
    const n = 9000;
    let wins = 0;
    for (let seed = 0; seed < n; seed++) {
      const steps = play(env, seed, (obs) => (obs.startsWith('question:') ? `answer(${rng.int(10, 100)})` : 'next()'));
      wins += steps.at(-1)!.info.success ? 1 : 0;
    }
    const p = 1 / 90;
    expect(Math.abs(wins / n - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / n));
  });

  it('a latest-observation policy that stores facts and recalls solves every episode', () => {
    const env = makeMemory({ facts: 3, rumors: 4, maxTurns: 12 });
    let asked = '';
    const policy = (obs: string): string => {
      const fact = /fact: (\w+) = (\d+)$/.exec(obs);
      if (fact) return `store(${fact[1]}, ${fact[2]})`;
      const q = /^question: what is (\w+)\?$/.exec(obs);
      if (q) return `recall(${(asked = q[1])})`;
      const note = /^result: (\w+) = (\d+)$/.exec(obs);
      if (note && note[1] === asked) return `answer(${note[2]})`;
      return 'next()';
    };
    for (let seed = 0; seed < 500; seed++) expect(play(env, seed, policy).at(-1)!.info.success).toBe(true);
  });

  it('storing a rumor over a fact gives the rumor back: a wrong answer', () => {
    const env = makeMemory();
    env.reset({ seed: 1 }); // fact ring = 65, fact drum = 70, rumor kite = 10, rumor drum = 69, asks drum
    env.step('store(ring, 65)');
    env.step('store(drum, 70)');
    env.step('next()');
    expect(env.step('store(drum, 69)')).toMatchObject({ reward: -0.02, obs: { text: 'stored drum. question: what is drum?' } });
    expect(env.step('recall(drum)')).toMatchObject({ reward: -0.02, obs: { text: 'result: drum = 69' }, info: { toolFailed: false } });
    expect(env.step('answer(69)')).toMatchObject({ reward: 0, terminated: true, info: { success: false }, obs: { text: 'done: wrong, drum was 70.' } });
  });

  it('charges store and recall (failed or not), not next(), malformed calls or answers', () => {
    const env = makeMemory({ toolCost: 0.1, maxTurns: 20 });
    env.reset({ seed: 2 });
    const cases: [string, number, boolean][] = [
      ['recall(door)', -0.1, false], // no note yet: a failed call, still charged
      ['store(door)', 0, true], // no value
      ['store(, 5)', 0, true],
      ['store(averyveryverylongkey, 5)', 0, true],
      ['recall()', 0, true],
      ['next(1)', 0, true],
      ['answer()', 0, true],
      ['Store(a, 1)', 0, true],
      ['store(a, 1) next()', 0, true],
      ['store( A ,  1 )', -0.1, false],
      ['recall(a)', -0.1, false],
      ['next()', 0, false],
    ];
    for (const [a, reward, malformed] of cases) {
      const r = env.step(a);
      expect([a, r.reward, r.info.malformed]).toEqual([a, reward, malformed]);
    }
    expect(env.step('recall(door)').info.toolFailed).toBe(true);
  });

  it('next() at the question is a free error; answering before the question is wrong', () => {
    const env = makeMemory({ facts: 1, rumors: 0 });
    env.reset({ seed: 3 });
    const value = env.schedule[0].value;
    expect(env.step(`answer(${value})`)).toMatchObject({ reward: 0, terminated: true, info: { success: false } });
    env.reset({ seed: 3 });
    expect(env.step('next()').obs.text).toMatch(/^question: what is \w+\?$/);
    expect(env.step('next()')).toMatchObject({ reward: 0, info: { toolFailed: true, malformed: false }, obs: { text: expect.stringMatching(/^error: no more items; question:/) } });
    expect(env.step(`answer( ${value} )`)).toMatchObject({ reward: 1, info: { success: true } });
  });

  it('draws the same episode from the same seed; rumors never repeat a fact value under its key', () => {
    const a = makeMemory();
    const b = makeMemory();
    for (let seed = 0; seed < 300; seed++) {
      a.reset({ seed });
      b.reset({ seed });
      expect(b.schedule).toEqual(a.schedule);
      const facts = a.schedule.filter((it) => it.kind === 'fact');
      for (const r of a.schedule.filter((it) => it.kind === 'rumor')) {
        expect(facts.some((f) => f.key === r.key && f.value === r.value)).toBe(false);
      }
      const q = a.schedule.at(-1)!;
      expect(facts.some((f) => f.key === q.key && f.value === q.value)).toBe(true);
    }
    a.reset({ seed: 4 });
    const s4 = JSON.stringify(a.schedule);
    a.reset({ seed: 5 });
    expect(JSON.stringify(a.schedule)).not.toBe(s4);
  });

  it('rejects bad kwargs with the env name', () => {
    expect(() => makeMemory({ facts: 0 })).toThrow(/tools\/memory: kwarg facts/);
    expect(() => makeMemory({ memoryTools: 1 })).toThrow(/tools\/memory: kwarg memoryTools/);
    expect(() => makeMemory({ facts: 4, rumors: 6 })).toThrow(/maxTurns 10 is too few/);
  });
});
