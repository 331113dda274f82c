import { describe, expect, it } from 'vitest';
import { makeCalculator } from './calculator.ts';

/**
 * Independent reference: reads the question text and evaluates it with BigInt, left to right
 * over terms `a op b` joined by + or - (the only shape the env generates).
 */
function solveQuestion(task: string): { value: bigint; factors: string[] } {
  const m = /^task: what is (.+)\? tools: calc\(expression\), answer\(number\)\.$/.exec(task);
  if (!m) throw new Error(`unexpected task text: ${task}`);
  const tokens = m[1].split(' ');
  // The drawn numbers: both factors of a product; quotient and divisor of a division.
  const factors: string[] = [];
  let total = 0n;
  let sign = 1n;
  for (let i = 0; i < tokens.length; ) {
    if (tokens[i] === '+' || tokens[i] === '-') {
      sign = tokens[i] === '+' ? 1n : -1n;
      i++;
    }
    const [a, op, b] = tokens.slice(i, i + 3);
    const x = BigInt(a);
    const y = BigInt(b);
    if (op === '/') expect(x % y).toBe(0n); // questions only hold exact quotients
    factors.push(op === '/' ? String(x / y) : a, b);
    total += sign * (op === '*' ? x * y : x / y);
    i += 3;
  }
  return { value: total, factors };
}

describe('tools/calculator', () => {
  it('plays a hand-worked episode', () => {
    const env = makeCalculator();
    const { obs, info } = env.reset({ seed: 1 });
    expect(obs.text).toBe('task: what is 3473 * 1561? tools: calc(expression), answer(number).');
    expect(info).toEqual({ turn: 0, malformedCount: 0 });
    const r1 = env.step('calc(3473 * 1561)');
    // 3473 * 1561 = 3473 * 1500 + 3473 * 61 = 5209500 + 211853 = 5421353
    expect(r1).toMatchObject({ obs: { text: 'result: 5421353' }, reward: 0, terminated: false, truncated: false });
    expect(r1.info).toMatchObject({ toolCall: 'calc', toolFailed: false, malformed: false, malformedCount: 0, turn: 1 });
    expect(r1.info.latencyMs).toBeGreaterThan(0);
    const r2 = env.step('answer(5421353)');
    expect(r2).toMatchObject({ obs: { text: 'done: correct, 5421353.' }, reward: 1, terminated: true, truncated: false });
    expect(r2.info).toMatchObject({ success: true, malformed: false, latencyMs: 0 });
    expect(r2.info.toolCall).toBeUndefined(); // answering is not a tool call
    expect(env.renderText()).toBe(
      [
        'task: what is 3473 * 1561? tools: calc(expression), answer(number).',
        '> calc(3473 * 1561)',
        'result: 5421353',
        '> answer(5421353)',
        'done: correct, 5421353.',
      ].join('\n'),
    );
    expect(env.frame().messages.map((m) => m.role)).toEqual(['task', 'agent', 'tool', 'agent', 'result']);
  });

  it('reports progress once, on the first calc() reply that shows the answer', () => {
    const env = makeCalculator();
    env.reset({ seed: 1 }); // 3473 * 1561 = 5421353
    const progress = ['calc(3473*1560)', 'calc(1561*3473)', 'calc(3473*1561)', 'answer(5421353)'].map((a) => env.step(a).info.progress);
    // A wrong product reaches nothing; the second showing of the answer is not new progress.
    expect(progress).toEqual([undefined, 1, undefined, undefined]);
  });

  it('scores a wrong answer 0 and reveals the right one', () => {
    const env = makeCalculator();
    env.reset({ seed: 1 });
    const r = env.step('answer(5421354)');
    expect(r).toMatchObject({ reward: 0, terminated: true, info: { success: false }, obs: { text: 'done: wrong, the answer is 5421353.' } });
  });

  it('treats a bad answer format and a bad expression as malformed, a math error as a tool error', () => {
    const env = makeCalculator({ maxTurns: 10 });
    env.reset({ seed: 1 });
    expect(env.step('answer(about 5 million)')).toMatchObject({
      terminated: false,
      info: { malformed: true, malformedCount: 1 },
      obs: { text: 'error: answer takes a whole number, e.g. answer(42); got "about 5 million"' },
    });
    expect(env.step('calc(3473 x 1561)')).toMatchObject({
      info: { malformed: true, malformedCount: 2 },
      obs: { text: 'error: calc: unexpected "x" at character 6 (use * to multiply)' },
    });
    const div = env.step('calc(10/2)');
    expect(div).toMatchObject({ info: { malformed: false, toolCall: 'calc', toolFailed: true, malformedCount: 2 } });
    expect(div.obs.text).toBe('error: division is not available in this calculator');
    expect(env.frame().messages.at(-1)).toEqual({ role: 'error', text: 'error: division is not available in this calculator' });
  });

  it('asks questions whose answers an independent BigInt evaluation confirms, with operands of the configured size', () => {
    for (const kwargs of [{}, { terms: 2 }, { terms: 3, division: true, minDigits: 2, maxDigits: 3 }]) {
      const env = makeCalculator({ ...kwargs });
      const { minDigits, maxDigits } = env.config;
      const lengths = new Set<number>();
      let sawDivision = false;
      for (let seed = 0; seed < 200; seed++) {
        const task = env.reset({ seed }).obs.text;
        const { value, factors } = solveQuestion(task);
        sawDivision ||= task.includes(' / ');
        for (const f of factors) lengths.add(f.length);
        const expert = env.expertAction()!;
        const r1 = env.step(expert);
        expect(r1.obs.text).toBe(`result: ${value}`);
        const r2 = env.step(env.expertAction()!);
        expect(r2.info.success).toBe(true);
        expect(env.step.bind(env, `answer(${value})`)).toThrow(); // episode over
        env.reset({ seed });
        expect(env.step(`answer(${value})`).reward).toBe(1);
      }
      // Every drawn number has between minDigits and maxDigits digits, and each length occurs.
      expect([...lengths].sort()).toEqual(Array.from({ length: maxDigits - minDigits + 1 }, (_, k) => minDigits + k));
      expect(sawDivision).toBe(env.config.division);
    }
  });

  it('with mixedDigits, gives every operand of a question the same length, drawn uniformly from minDigits..maxDigits', () => {
    const env = makeCalculator({ minDigits: 1, maxDigits: 4, mixedDigits: true, terms: 2 });
    const counts = [0, 0, 0, 0];
    for (let seed = 0; seed < 400; seed++) {
      const { factors } = solveQuestion(env.reset({ seed }).obs.text);
      const lens = new Set(factors.map((f) => f.length));
      expect(lens.size).toBe(1); // one difficulty per question
      counts[[...lens][0] - 1]++;
    }
    // 400 questions over 4 lengths: 100 each expected; every length well represented
    // (without mixedDigits, 1..4 digits would make ~90% of operands 4 digits long).
    for (const c of counts) expect(c).toBeGreaterThan(60);
    expect(() => makeCalculator({ mixedDigits: 'yes' })).toThrow(/mixedDigits/);
  });
});
