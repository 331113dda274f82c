/**
 * The calculator tool's arithmetic: a recursive-descent parser (no eval) for whole numbers,
 * + - * /, unary minus and parentheses, then an exact integer evaluator.
 *
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/') unary)*
 *   unary   := ('-' | '+') unary | primary
 *   primary := digits | '(' expr ')'
 *
 * Spaces between tokens are ignored. Syntax errors (what a malformed call is) and evaluation
 * errors (division by zero, a quotient that is not whole, a result beyond 2^53) are kept apart,
 * because the env counts only the first as a malformed action.
 */

export type Expr =
  | { kind: 'num'; value: number }
  | { kind: 'neg'; arg: Expr }
  | { kind: 'bin'; op: '+' | '-' | '*' | '/'; left: Expr; right: Expr };

export type ParseExprResult = { ok: true; expr: Expr } | { ok: false; error: string };
export type EvalResult = { ok: true; value: number } | { ok: false; error: string };

/** Deepest nesting of parentheses and unary signs accepted (bounds recursion). */
const MAX_DEPTH = 64;
/** Longest literal, in digits: keeps every literal an exact double. */
const MAX_DIGITS = 15;

class ParseError extends Error {}
class MathError extends Error {}

/** What is wrong at character `at` of `src` (0-based), with a hint for the usual slips. */
function unexpectedAt(src: string, at: number): string {
  if (at >= src.length) return 'the expression ends too early: a number is missing';
  const ch = src[at];
  const hint =
    ch === 'x' || ch === 'X'
      ? ' (use * to multiply)'
      : ch === '.' || ch === ','
        ? ' (whole numbers only, no separators)'
        : ch === '^'
          ? ' (no powers: multiply it out)'
          : '';
  return `unexpected ${JSON.stringify(ch)} at character ${at + 1}${hint}`;
}

export function parseExpr(src: string): ParseExprResult {
  let i = 0;
  let depth = 0;
  const skip = () => {
    while (i < src.length && src[i] === ' ') i++;
  };
  const describe = (at: number) => unexpectedAt(src, at);
  const fail = (msg: string): never => {
    throw new ParseError(msg);
  };

  const primary = (): Expr => {
    skip();
    if (src[i] === '(') {
      i++;
      if (++depth > MAX_DEPTH) fail('too deeply nested');
      const e = expr();
      skip();
      if (src[i] !== ')') fail(i >= src.length ? 'missing ")"' : describe(i));
      i++;
      depth--;
      return e;
    }
    const start = i;
    while (i < src.length && src[i] >= '0' && src[i] <= '9') i++;
    if (i === start) fail(describe(i));
    if (i - start > MAX_DIGITS) fail(`number too long (at most ${MAX_DIGITS} digits)`);
    return { kind: 'num', value: Number(src.slice(start, i)) };
  };

  const unary = (): Expr => {
    skip();
    if (src[i] === '-' || src[i] === '+') {
      const neg = src[i] === '-';
      i++;
      if (++depth > MAX_DEPTH) fail('too deeply nested');
      const arg = unary();
      depth--;
      return neg ? { kind: 'neg', arg } : arg;
    }
    return primary();
  };

  // A left-associative chain of `operand`s joined by `ops` (term: * /, expr: + -).
  const chain = (ops: readonly ('+' | '-' | '*' | '/')[], operand: () => Expr) => (): Expr => {
    let left = operand();
    for (;;) {
      skip();
      const op = ops.find((o) => o === src[i]);
      if (!op) return left;
      i++;
      left = { kind: 'bin', op, left, right: operand() };
    }
  };
  const term = chain(['*', '/'], unary);
  const expr: () => Expr = chain(['+', '-'], term);

  try {
    skip();
    if (i >= src.length) return { ok: false, error: 'empty expression' };
    const e = expr();
    skip();
    if (i < src.length) fail(src[i] === ')' ? `unmatched ")" at character ${i + 1}` : describe(i));
    return { ok: true, expr: e };
  } catch (err) {
    if (err instanceof ParseError) return { ok: false, error: err.message };
    throw err;
  }
}

export interface EvalOptions {
  /** Allow '/' (exact division only). */
  division: boolean;
}

/** Exact integer evaluation; every intermediate value must stay a safe integer. */
export function evaluate(e: Expr, opts: EvalOptions): EvalResult {
  const go = (x: Expr): number => {
    switch (x.kind) {
      case 'num':
        return x.value;
      case 'neg':
        return -go(x.arg);
      case 'bin': {
        const a = go(x.left);
        const b = go(x.right);
        let v: number;
        if (x.op === '+') v = a + b;
        else if (x.op === '-') v = a - b;
        else if (x.op === '*') v = a * b;
        else {
          if (!opts.division) throw new MathError('division is not available in this calculator');
          if (b === 0) throw new MathError('division by zero');
          if (a % b !== 0) throw new MathError(`${a} / ${b} is not a whole number`);
          v = a / b;
        }
        if (!Number.isSafeInteger(v)) throw new MathError('number too large');
        return v;
      }
    }
  };
  try {
    const v = go(e);
    return { ok: true, value: v === 0 ? 0 : v };
  } catch (err) {
    if (err instanceof MathError) return { ok: false, error: err.message };
    throw err;
  }
}

/** Parse and evaluate; `syntax` tells which stage failed. */
export function calculate(src: string, opts: EvalOptions): EvalResult | { ok: false; error: string; syntax: true } {
  const p = parseExpr(src);
  if (!p.ok) return { ok: false, error: p.error, syntax: true };
  return evaluate(p.expr, opts);
}
