import { describe, expect, it } from 'vitest';
import { growthLines, instrumentLoops, rewardLine, tokenize, topLevelBindings } from './source.ts';

/** Loops of every kind the counters rewrite, braced and not, labelled, with strings, comments and regexes that look like loops. */
const LOOPS = `function run(n) {
  const out = [];
  let i = 0;
  while (i < n) i++;
  out.push(i);
  outer: for (let a = 0, b = 10; a < b; a++) {
    for (let c = 0; ; c++) { if (c > a) continue outer; if (c === 3) break outer; }
  }
  let k = 0;
  do k += 2; while (k < n);
  out.push(k);
  for (const v of [1, 2, 3]) out.push(v * 2);
  for (const key in { p: 1, q: 2 }) { out.push(key); }
  let s = '';
  for (;;) { s += 'x'; if (s.length > 4) break; }
  out.push(s, "while (x) {", /for (;;)/.source, \`\${n} for\`);
  // while (true) in a comment
  let j;
  for (j = 0; j < 3; j++);
  out.push(j);
  return out;
}`;

describe('source.ts (the check\'s reading of a module)', () => {
  it('instrumentLoops keeps every line and what the code computes, and counts each loop\'s iterations in its current run', () => {
    const { code, lines } = instrumentLoops(LOOPS, '__lc');
    expect(code.split('\n').length).toBe(LOOPS.split('\n').length);
    const at = (t: string) => LOOPS.split('\n').findIndex((l) => l.includes(t)) + 1;
    expect(lines).toEqual([at('while (i < n)'), at('outer: for'), at('for (let c'), at('do k'), at('for (const v'), at('for (const key'), at('for (;;)'), at('for (j = 0')]);
    const plain = new Function(`${LOOPS}; return run(7);`)() as unknown[];
    const counts: number[] = new Array(lines.length).fill(0);
    const counted = new Function('__lc', `${code}; return run(7);`)(counts) as unknown[];
    expect(counted).toEqual(plain);
    // while: 7 iterations + the failing test; do-while: the test after each of its 4 runs of the body.
    expect(counts[0]).toBe(8);
    expect(counts[3]).toBe(4);
    // The inner for(;;) loop's last run (a = 3, stopped by break outer at c = 3): 4 tests.
    expect(counts[2]).toBe(4);
    expect(counts[6]).toBe(5);
    expect(counts[7]).toBe(4);
  });

  it('tokenize skips strings, templates, comments and regexes whole, with their lines', () => {
    const toks = tokenize('a = "x\\"y" + `t ${b} u`; // c\n/* d\n e */ f = /g\\/[/]h/i.test(a) / 2;');
    expect(toks.map((t) => t.text)).toEqual(['a', '=', '"x\\"y"', '+', '`t ${b} u`', ';', 'f', '=', '/g\\/[/]h/i', '.', 'test', '(', 'a', ')', '/', '2', ';']);
    expect(toks.find((t) => t.text === 'f')!.line).toBe(3);
  });

  it('rewardLine: the line in step() that assigns the reward, the NaN-prone one among several', () => {
    const code = 'export const env = { reward: 1 };\nexport function step(a) {\n  let reward = 0;\n  if (a) reward = 1 / dist;\n  return { reward };\n}';
    expect(rewardLine(code)).toBe(4);
    expect(rewardLine('export function step(a) {\n  const x = 1;\n  return { observation: 1,\n    reward: x };\n}')).toBe(4);
    expect(rewardLine('function step() { return { reward: 0 } }')).toBeNull();
  });

  it('topLevelBindings and growthLines: the module\'s own variables and the lines that grow one', () => {
    const code = 'const A = [1, 2], B = {};\nlet x = f(1, 2), y;\nfunction g() { let inner = 1; A.push(x); }\nB.log = [];\nB.log.push(1);\nA[3] = 2;\nconst n = A.length;';
    expect(topLevelBindings(code)).toEqual([{ name: 'A', line: 1 }, { name: 'B', line: 1 }, { name: 'x', line: 2 }, { name: 'y', line: 2 }, { name: 'n', line: 7 }]);
    expect(growthLines(code, 'A')).toEqual([3, 6]);
    expect(growthLines(code, 'B')).toEqual([4, 5]);
    expect(growthLines(code, 'n')).toEqual([]);
  });
});
