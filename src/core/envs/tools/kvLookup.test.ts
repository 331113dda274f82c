import { describe, expect, it } from 'vitest';
import { makeKvLookup } from './kvLookup.ts';
import type { KvLookupEnv } from './kvLookup.ts';

/**
 * An independent player that sees only observation text (like the agent): it reads the start
 * key off the question, follows `run by team X` / `manager Y` / `lives in Z`, and answers.
 * Returns the number of lookups it made and whether the env scored it a success.
 */
function readAndSolve(env: KvLookupEnv, seed: number): { lookups: number; success: boolean; answer: string } {
  const task = env.reset({ seed }).obs.text;
  const q = /^task: which city does the manager of (?:team (\w+)|the team behind project (\w+)) live in\? tools: lookup\(key\), answer\(city\)\.$/.exec(task);
  if (!q) throw new Error(`unexpected task: ${task}`);
  let key = q[1] !== undefined ? `team ${q[1]}` : `project ${q[2]}`;
  let lookups = 0;
  for (;;) {
    const text = env.step(`lookup(${key})`).obs.text;
    lookups++;
    const runBy = /^result: project \w+: run by team (\w+)/.exec(text);
    const manager = /^result: team \w+: manager (\w+)/.exec(text);
    const lives = /^result: \w+: lives in (\w+)/.exec(text);
    if (runBy) key = `team ${runBy[1]}`;
    else if (manager) key = manager[1];
    else if (lives) {
      const r = env.step(`answer(${lives[1]})`);
      return { lookups, success: r.info.success === true, answer: lives[1] };
    } else throw new Error(`unexpected reply: ${text}`);
  }
}

describe('tools/kv-lookup', () => {
  it('resolves a hand-checked 2-hop chain (seed 1)', () => {
    const env = makeKvLookup();
    expect(env.reset({ seed: 1 }).obs.text).toBe('task: which city does the manager of team jade live in? tools: lookup(key), answer(city).');
    const r1 = env.step('lookup(team jade)');
    expect(r1.obs.text).toBe('result: team jade: manager wen, home city zagreb, 15 players');
    expect(r1.info).toMatchObject({ toolCall: 'lookup', toolFailed: false, malformed: false });
    expect(env.step('lookup(wen)').obs.text).toBe('result: wen: lives in quito, born in rome, age 64');
    // zagreb (the team's home) and rome (wen's birthplace) are the distractors; quito is right.
    expect(env.step('answer(quito)')).toMatchObject({ reward: 1, terminated: true, info: { success: true }, obs: { text: 'done: correct, quito.' } });
  });

  it('reports one unit of progress per hop, the first time its key is looked up', () => {
    const env = makeKvLookup();
    env.reset({ seed: 1 });
    const progress = ['lookup(team jade)', 'lookup(Team  Jade)', 'lookup(team red)', 'lookup(nobody)', 'lookup(wen)'].map((a) => env.step(a).info.progress);
    // A repeat (case and spaces ignored), an off-chain entry and a missing key reach nothing new.
    expect(progress).toEqual([1, undefined, undefined, undefined, 1]);
  });

  it('resolves a hand-checked 3-hop chain (seed 1)', () => {
    const env = makeKvLookup({ hops: 3 });
    const task = env.reset({ seed: 1 }).obs.text;
    expect(task).toBe('task: which city does the manager of the team behind project juno live in? tools: lookup(key), answer(city).');
    expect(env.step('lookup(project juno)').obs.text).toBe('result: project juno: run by team jade, started 2014');
    expect(env.step('lookup(team jade)').obs.text).toBe('result: team jade: manager wen, home city zagreb, 15 players');
    expect(env.step('lookup(wen)').obs.text).toBe('result: wen: lives in quito, born in rome, age 64');
    expect(env.expertAction()).toBe('answer(quito)');
    expect(env.step('answer(zagreb)')).toMatchObject({ reward: 0, info: { success: false }, obs: { text: 'done: wrong, the answer is quito.' } });
  });

  it('needs exactly `hops` lookups, read from the text alone, on every seed', () => {
    for (const hops of [2, 3]) {
      const env = makeKvLookup({ hops });
      for (let seed = 0; seed < 300; seed++) {
        const r = readAndSolve(env, seed);
        expect(r.success).toBe(true);
        expect(r.lookups).toBe(hops);
        expect(r.answer).toBe(env.knowledgeBase.answer);
      }
    }
  });

  it('punishes answering with the first city seen (distractors)', () => {
    const env = makeKvLookup();
    let firstCityRight = 0;
    for (let seed = 0; seed < 200; seed++) {
      env.reset({ seed });
      const text = env.step(`lookup(${env.knowledgeBase.chain[0]})`).obs.text;
      const city = /home city (\w+)/.exec(text)![1];
      if (env.step(`answer(${city})`).info.success) firstCityRight++;
    }
    expect(firstCityRight).toBe(0); // a team's home city never equals its manager's city
  });

  it('answers a missing key with a tool error, not a malformed call; ignores case and extra spaces', () => {
    const env = makeKvLookup();
    env.reset({ seed: 1 });
    const miss = env.step('lookup(jade)');
    expect(miss.obs.text).toBe('error: no entry for "jade"');
    expect(miss.info).toMatchObject({ toolCall: 'lookup', toolFailed: true, malformed: false, malformedCount: 0 });
    expect(env.step('lookup(  Team   JADE )').obs.text).toBe('result: team jade: manager wen, home city zagreb, 15 players');
    expect(env.step('lookup()')).toMatchObject({ info: { malformed: true, malformedCount: 1 }, obs: { text: 'error: lookup needs a key, e.g. lookup(team red)' } });
    expect(env.step('answer( Quito )').info.success).toBe(true);
  });

  it('draws worlds that vary with the seed and keep their invariants', () => {
    const env = makeKvLookup({ teams: 6 });
    const answers = new Set<string>();
    for (let seed = 0; seed < 100; seed++) {
      env.reset({ seed });
      const kb = env.knowledgeBase;
      answers.add(kb.answer);
      const teams = [...kb.entries.keys()].filter((k) => k.startsWith('team '));
      const projects = [...kb.entries.keys()].filter((k) => k.startsWith('project '));
      expect(teams).toHaveLength(6);
      expect(projects).toHaveLength(6);
      expect(kb.entries.size).toBe(6 + 6 + 12);
      const managers = teams.map((t) => /manager (\w+)/.exec(kb.entries.get(t)!)![1]);
      expect(new Set(managers).size).toBe(6); // one manager per team: the chain is unambiguous
      for (const [key, text] of kb.entries) expect(text.startsWith(`${key}: `)).toBe(true);
    }
    expect(answers.size).toBeGreaterThan(10);
  });
});
