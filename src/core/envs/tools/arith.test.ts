import { describe, expect, it } from 'vitest';
import { calculate, evaluate, parseExpr } from './arith.ts';

// Values worked out by hand (precedence: * and / bind tighter than + and -, left to right).
const GOOD: [string, number][] = [
  ['0', 0],
  ['7', 7],
  ['  42  ', 42],
  ['2+3*4', 14], // not 20
  ['(2+3)*4', 20],
  ['2*3+4*5', 26],
  ['10-4-3', 3], // left-assoc: (10-4)-3, not 10-(4-3)=9
  ['2*(3+(4-1))*5', 60],
  ['((((7))))', 7],
  ['-5+2', -3],
  ['-(2+3)*2', -10],
  ['3*-2', -6],
  ['--4', 4],
  ['+4', 4],
  ['1 - -1', 2],
  ['347 * 8062', 2797514], // 347*8000 = 2776000, 347*62 = 21514
  ['3473*1561', 5421353], // 3473*1500 = 5209500, 3473*61 = 211853
  ['9999*9999', 99980001],
  ['347*806-915*4062', -3437048], // 279682 - 3716730
  ['0-0', 0],
  ['-0', 0], // no -0 escapes
];

const SYNTAX: [string, RegExp][] = [
  ['', /empty expression/],
  ['   ', /empty expression/],
  ['2+', /ends too early/],
  ['*3', /unexpected "\*" at character 1/],
  ['(2+3', /missing "\)"/],
  ['2+3)', /unmatched "\)" at character 4/],
  ['()', /unexpected "\)" at character 2/],
  ['12x4', /unexpected "x" at character 3 \(use \* to multiply\)/],
  ['1.5*2', /unexpected "\." at character 2 \(whole numbers only/],
  ['1,000*2', /whole numbers only/],
  ['2^3', /no powers/],
  ['2 3', /unexpected "3" at character 3/],
  ['a+1', /unexpected "a" at character 1/],
  ['1234567890123456', /number too long/],
  ['('.repeat(70) + '1' + ')'.repeat(70), /too deeply nested/],
  ['-'.repeat(70) + '1', /too deeply nested/],
];

describe('calculator arithmetic', () => {
  it.each(GOOD)('%s = %d', (src, want) => {
    const r = calculate(src, { division: false });
    expect(r).toEqual({ ok: true, value: want });
    if (r.ok) expect(Object.is(r.value, -0)).toBe(false);
  });

  it.each(SYNTAX)('%s is a syntax error', (src, msg) => {
    const p = parseExpr(src);
    expect(p.ok).toBe(false);
    if (!p.ok) expect(p.error).toMatch(msg);
    expect(calculate(src, { division: true })).toMatchObject({ ok: false, syntax: true });
  });

  it('keeps evaluation errors apart from syntax errors', () => {
    expect(calculate('8/2', { division: false })).toEqual({ ok: false, error: 'division is not available in this calculator' });
    expect(calculate('8/2', { division: true })).toEqual({ ok: true, value: 4 });
    expect(calculate('100/10/5', { division: true })).toEqual({ ok: true, value: 2 }); // (100/10)/5
    expect(calculate('2+12/4*3', { division: true })).toEqual({ ok: true, value: 11 }); // 2 + (12/4)*3
    expect(calculate('-9/3', { division: true })).toEqual({ ok: true, value: -3 });
    expect(calculate('7/2', { division: true })).toEqual({ ok: false, error: '7 / 2 is not a whole number' });
    expect(calculate('5/(3-3)', { division: true })).toEqual({ ok: false, error: 'division by zero' });
    expect(calculate('999999999999999*999999999999999', { division: false })).toEqual({ ok: false, error: 'number too large' });
    // 2^53 - 1 is the last safe integer; one more is refused rather than rounded.
    expect(calculate('900719925474099*10+1', { division: false })).toEqual({ ok: true, value: 9007199254740991 });
    expect(calculate('900719925474099*10+2', { division: false })).toEqual({ ok: false, error: 'number too large' });
  });

  it('builds the tree with the right shape', () => {
    const p = parseExpr('1-2*3');
    expect(p).toEqual({
      ok: true,
      expr: {
        kind: 'bin',
        op: '-',
        left: { kind: 'num', value: 1 },
        right: { kind: 'bin', op: '*', left: { kind: 'num', value: 2 }, right: { kind: 'num', value: 3 } },
      },
    });
    if (p.ok) expect(evaluate(p.expr, { division: false })).toEqual({ ok: true, value: -5 });
  });
});
