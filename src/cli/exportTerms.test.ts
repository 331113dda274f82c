/**
 * (Here, not beside src/core/export/pyTerms.ts: it runs python3, and src/core runs in browsers too.)
 * Translated terms compute in Python what the JS term computes, step by step: the JS module is
 * imported as it is (the reference), the translation run by python3 on the same records. Cases
 * are picked where a naive translation differs: % (Python's sign follows the divisor), x/0
 * (Python raises), === null (Python's == None works, `is` is what is emitted), Math.round of a
 * half (Python rounds to even), && / || returning an operand.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { translateTerms } from '../core/export/pyTerms.ts';
import { availableFields } from '../core/export/bundle.ts';
import { hasPython } from './testPython.ts';

const CODE = `
// comments and both function forms
export const progressBonus = (step) => 0.1 * step.info.progress;
export const signedRest = (step) => step.reward % 0.3;
export const ratio = step => step.reward / step.info.progress;
export const noCall = (step) => step.info.toolCall === null ? 1 : 0;
export function failedLate(step) {
  return step.info.toolFailed && step.t > 1 ? -1 : 0.5;
}
export const clampT = (step) => Math.max(0, Math.min(1, step.t / 3));
export const half = (step) => Math.round(step.reward * 2.5);
export const orValue = (step) => (step.info.progress || 2) + (step.info.success && 3);
export const named = (step) => (step.actionName === 'calc(1+2)' ? -step.episode.returnSoFar : step.episode.length);
/* block comment */
export function closer(step) {
  const prev = step.episode.steps[step.t - 1];
  return prev ? 1 : 0;
}
export const privileged = (step) => step.state.goalDistance;
export const indexed = (step) => step.episode.steps[0].reward;
export const global = (step) => Date.now();
`;

const info = (o: Record<string, unknown>) => ({ progress: 0, success: false, toolCall: null, toolFailed: false, recovered: false, malformed: false, ...o });
const RECORDS = [
  { t: 0, observation: { text: 'task', direction: -1, nextText: 'result: 3' }, action: -1, actionName: 'calc(1+2)', reward: -1, terminated: false, truncated: false, info: info({ toolCall: 'calc', progress: 0 }), episode: { seed: 1, envId: 'tools/calculator', length: 3, returnSoFar: 0.5 } },
  { t: 2, observation: { text: 'x', direction: -1, nextText: 'y' }, action: -1, actionName: 'answer(3)', reward: 1, terminated: true, truncated: false, info: info({ toolFailed: true, progress: 2, success: true }), episode: { seed: 1, envId: 'tools/calculator', length: 3, returnSoFar: -1 } },
  { t: 1, observation: { text: 'x', direction: -1, nextText: 'y' }, action: -1, actionName: 'hello', reward: 0, terminated: false, truncated: false, info: info({ malformed: true }), episode: { seed: 1, envId: 'tools/calculator', length: 3, returnSoFar: 0 } },
];

/** Non-finite numbers as strings, so JSON carries them. */
const norm = (x: number) => (Number.isFinite(x) ? Math.round(x * 1e12) / 1e12 : String(x));

describe('translateTerms', () => {
  const out = translateTerms(CODE, availableFields(false, 'trl'));
  const byName = new Map(out.map((t) => [t.name, t]));

  it('translates the one-expression terms and leaves the rest to the server, saying why', () => {
    expect(out.map((t) => t.name)).toEqual(['progressBonus', 'signedRest', 'ratio', 'noCall', 'failedLate', 'clampT', 'half', 'orValue', 'named', 'closer', 'privileged', 'indexed', 'global']);
    const stays = out.filter((t) => t.python === null).map((t) => [t.name, (t as { why: string }).why]);
    expect(stays).toEqual([
      ['closer', 'its body is more than one return of an expression'],
      ['privileged', 'it reads step.state.goalDistance, which this export cannot fill'],
      ['indexed', 'it reads a call or index on the step'],
      ['global', "it reads the name 'Date' (only the step and Math are read)"],
    ]);
    expect(byName.get('noCall')).toMatchObject({ python: '(1 if (step["info"]["toolCall"] is None) else 0)', fields: ['info.toolCall'] });
  });

  it.skipIf(!hasPython)('each translation gives the JS value on every record (python3)', async () => {
    const mod = (await import(`data:text/javascript;base64,${Buffer.from(CODE).toString('base64')}`)) as Record<string, (s: unknown) => number>;
    const translated = out.filter((t) => t.python !== null) as { name: string; python: string }[];
    const expected = RECORDS.map((r) => Object.fromEntries(translated.map((t) => [t.name, norm(Number(mod[t.name](r)))])));
    const py = [
      'import json, math, sys',
      'def _div(a, b):',
      '    try:',
      '        return a / b',
      '    except ZeroDivisionError:',
      '        return math.nan if a == 0 or a != a else math.copysign(math.inf, a) * math.copysign(1.0, b)',
      'def _round(x):',
      '    return math.floor(x + 0.5)',
      ...translated.map((t) => `def ${t.name}(step):\n    return ${t.python}`),
      'def norm(x):',
      '    x = float(x)',
      "    return round(x, 12) if math.isfinite(x) else ('NaN' if x != x else ('Infinity' if x > 0 else '-Infinity'))",
      'records = json.load(sys.stdin)',
      `print(json.dumps([{n: norm(globals()[n](r)) for n in ${JSON.stringify(translated.map((t) => t.name))}} for r in records]))`,
    ].join('\n');
    const got = JSON.parse(execFileSync('python3', ['-c', py], { input: JSON.stringify(RECORDS) }).toString()) as unknown[];
    expect(got).toEqual(expected);
    // The cases the wrong variants get wrong, as hand-worked values: -1 % 0.3 = -0.1 (Python's % gives 0.2),
    // Math.round(2.5) = 3 (Python's round gives 2), -1 / 0 = -Infinity (Python raises).
    expect(expected[0].signedRest).toBe(-0.1);
    expect(expected[1].half).toBe(3);
    expect(expected[0].ratio).toBe('-Infinity');
  });
});
