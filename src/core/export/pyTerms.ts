/**
 * Reward-lab terms as Python: a term whose body is one expression of simple arithmetic over step
 * fields (`(step) => 0.1 * step.info.progress`, `export function f(step) { return …; }`) becomes
 * a Python function of the same name over a step-record dict; any other term (statements, loops,
 * `step.episode.steps[…]`, fields the exporting framework cannot see) is left to the playground's
 * env server, which scores it in its own sandbox (`npm run serve -- --reward-file`).
 *
 * The grammar translated: numbers, strings, true/false/null, `step.a.b` member chains, the
 * operators + − * / % ! unary −, comparisons (=== !== == != < <= > >=), && ||, `c ? a : b`,
 * parentheses, and Math.abs/min/max/sqrt/floor/ceil/round/exp/log. JS semantics kept where
 * Python differs: division by zero gives ±Infinity/NaN (`_div`), % takes the dividend's sign
 * (math.fmod), && and || return an operand as in JS.
 */

/** One exported term: its name, and either its Python body or why it stays on the server. */
export type TermTranslation = { name: string; python: string; fields: string[] } | { name: string; python: null; why: string };

/** Step-record fields (dotted paths) the exporting side can fill from the env server's replies. */
export type FieldSet = ReadonlySet<string>;

type Tok = { kind: 'num' | 'str' | 'id' | 'op'; text: string };

const OPS = ['===', '!==', '==', '!=', '<=', '>=', '&&', '||', '=>', '<', '>', '+', '-', '*', '/', '%', '!', '?', ':', '(', ')', '[', ']', ',', '.'];

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const num = /^(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)/.exec(src.slice(i));
    if (num) {
      out.push({ kind: 'num', text: num[1] });
      i += num[1].length;
      continue;
    }
    const id = /^[A-Za-z_$][\w$]*/.exec(src.slice(i));
    if (id) {
      out.push({ kind: 'id', text: id[0] });
      i += id[0].length;
      continue;
    }
    if (c === "'" || c === '"') {
      const end = src.indexOf(c, i + 1);
      const body = end < 0 ? null : src.slice(i + 1, end);
      if (body === null || body.includes('\\')) throw new Error('a string with escapes');
      out.push({ kind: 'str', text: body });
      i = end + 1;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new Error(`the character ${JSON.stringify(c)}`);
    out.push({ kind: 'op', text: op });
    i += op.length;
  }
  return out;
}

const MATH: Record<string, string> = { abs: 'abs', min: 'min', max: 'max', sqrt: 'math.sqrt', floor: 'math.floor', ceil: 'math.ceil', round: '_round', exp: 'math.exp', log: 'math.log' };

/** Binary operators by precedence, loosest first, with their Python form. */
const LEVELS: { ops: Record<string, string> }[] = [
  { ops: { '||': 'or' } },
  { ops: { '&&': 'and' } },
  { ops: { '===': '==', '!==': '!=', '==': '==', '!=': '!=' } },
  { ops: { '<': '<', '<=': '<=', '>': '>', '>=': '>=' } },
  { ops: { '+': '+', '-': '-' } },
  { ops: { '*': '*', '/': '/', '%': '%' } },
];

/** Recursive descent over one expression; throws with what it could not translate. */
class Parser {
  private i = 0;
  readonly fields = new Set<string>();
  constructor(
    private readonly toks: Tok[],
    private readonly param: string,
    private readonly available: FieldSet,
  ) {}

  private peek(): Tok | undefined {
    return this.toks[this.i];
  }
  private eat(text: string): boolean {
    if (this.peek()?.text === text && this.peek()?.kind !== 'str') {
      this.i++;
      return true;
    }
    return false;
  }
  private need(text: string): void {
    if (!this.eat(text)) throw new Error(`expected '${text}' at ${this.peek()?.text ?? 'the end'}`);
  }

  parse(): string {
    const e = this.ternary();
    if (this.i < this.toks.length) throw new Error(`'${this.peek()!.text}' after the expression`);
    return e;
  }

  private ternary(): string {
    const cond = this.binary(0);
    if (!this.eat('?')) return cond;
    const a = this.ternary();
    this.need(':');
    const b = this.ternary();
    return `(${a} if ${cond} else ${b})`;
  }

  private binary(level: number): string {
    if (level === LEVELS.length) return this.unary();
    let left = this.binary(level + 1);
    for (;;) {
      const t = this.peek();
      const py = t && t.kind === 'op' ? LEVELS[level].ops[t.text] : undefined;
      if (!py) return left;
      this.i++;
      const right = this.binary(level + 1);
      if (py === '/') left = `_div(${left}, ${right})`;
      else if (py === '%') left = `math.fmod(${left}, ${right})`;
      else if ((py === '==' || py === '!=') && (right === 'None' || left === 'None')) left = `(${left} ${py === '==' ? 'is' : 'is not'} ${right})`;
      else left = `(${left} ${py} ${right})`;
    }
  }

  private unary(): string {
    if (this.eat('-')) return `(-${this.unary()})`;
    if (this.eat('+')) return `(+${this.unary()})`;
    if (this.eat('!')) return `(not ${this.unary()})`;
    return this.primary();
  }

  private primary(): string {
    const t = this.peek();
    if (!t) throw new Error('an unfinished expression');
    this.i++;
    if (t.kind === 'num') return String(Number(t.text));
    if (t.kind === 'str') return JSON.stringify(t.text);
    if (t.text === '(') {
      const e = this.ternary();
      this.need(')');
      return `(${e})`;
    }
    if (t.kind !== 'id') throw new Error(`'${t.text}'`);
    if (t.text === 'true') return 'True';
    if (t.text === 'false') return 'False';
    if (t.text === 'null' || t.text === 'undefined') return 'None';
    if (t.text === 'Math') return this.math();
    if (t.text !== this.param) throw new Error(`the name '${t.text}' (only the step and Math are read)`);
    const path: string[] = [];
    while (this.eat('.')) {
      const f = this.peek();
      if (!f || f.kind !== 'id') throw new Error('a computed member access');
      this.i++;
      path.push(f.text);
    }
    if (this.peek()?.text === '(' || this.peek()?.text === '[') throw new Error('a call or index on the step');
    const dotted = path.join('.');
    if (!this.available.has(dotted)) throw new Error(`step.${dotted || '(the whole record)'}, which this export cannot fill`);
    this.fields.add(dotted);
    return `step${path.map((p) => `[${JSON.stringify(p)}]`).join('')}`;
  }

  private math(): string {
    this.need('.');
    const f = this.peek();
    const py = f && MATH[f.text];
    if (!f || !py) throw new Error(`Math.${f?.text ?? ''}`);
    this.i++;
    this.need('(');
    const args: string[] = [];
    if (!this.eat(')')) {
      do args.push(this.ternary());
      while (this.eat(','));
      this.need(')');
    }
    return `${py}(${args.join(', ')})`;
  }
}

/** Strips // and /* *\/ comments (outside strings; terms with strings holding comment markers stay on the server). */
function stripComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, '');
}

/** The text between `open` at `from` and its matching close, or null. */
function balanced(code: string, from: number, open: string, close: string): string | null {
  let depth = 0;
  for (let i = from; i < code.length; i++) {
    if (code[i] === open) depth++;
    else if (code[i] === close && --depth === 0) return code.slice(from + 1, i);
  }
  return null;
}

/** Each `export` of the module: name, parameter, and its single expression (null with why when the shape is not one). */
function exportedTerms(code: string): { name: string; param: string | null; expr: string | null; why?: string }[] {
  const src = stripComments(code);
  const out: { name: string; param: string | null; expr: string | null; why?: string }[] = [];
  const re = /export\s+(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*|export\s+function\s+([A-Za-z_$][\w$]*)\s*\(\s*([A-Za-z_$][\w$]*)?\s*\)\s*\{/g;
  for (let m = re.exec(src); m; m = re.exec(src)) {
    const start = re.lastIndex;
    if (m[2] !== undefined) {
      const body = balanced(src, start - 1, '{', '}');
      const ret = body === null ? null : /^\s*return\s+([\s\S]*?);?\s*$/.exec(body);
      const simple = ret && !/\b(return|if|for|while|const|let|var)\b|[;{}]/.test(ret[1]);
      out.push({ name: m[2], param: m[3] ?? null, expr: simple ? ret[1] : null, why: simple ? undefined : 'its body is more than one return of an expression' });
      continue;
    }
    const arrow = /^(?:\(\s*([A-Za-z_$][\w$]*)?\s*\)|([A-Za-z_$][\w$]*))\s*=>\s*/.exec(src.slice(start));
    if (!arrow) {
      out.push({ name: m[1], param: null, expr: null, why: 'it is not an arrow function' });
      continue;
    }
    const rest = src.slice(start + arrow[0].length);
    if (rest.startsWith('{')) {
      const body = balanced(rest, 0, '{', '}');
      const ret = body === null ? null : /^\s*return\s+([\s\S]*?);?\s*$/.exec(body);
      const simple = ret && !/\b(return|if|for|while|const|let|var)\b|[;{}]/.test(ret[1]);
      out.push({ name: m[1], param: arrow[1] ?? arrow[2] ?? null, expr: simple ? ret[1] : null, why: simple ? undefined : 'its body is more than one return of an expression' });
      continue;
    }
    const end = rest.search(/;|\n\s*export\b|$/);
    out.push({ name: m[1], param: arrow[1] ?? arrow[2] ?? null, expr: rest.slice(0, end).trim() });
  }
  return out;
}

/** Every exported term of a reward module, translated to Python where it is simple arithmetic over `available` fields. */
export function translateTerms(code: string, available: FieldSet): TermTranslation[] {
  return exportedTerms(code).map((t) => {
    if (t.expr === null) return { name: t.name, python: null, why: t.why ?? 'its shape is not one expression' };
    if (t.param === null) return { name: t.name, python: null, why: 'it takes no step argument' };
    try {
      const p = new Parser(tokenize(t.expr), t.param, available);
      const python = p.parse();
      return { name: t.name, python, fields: [...p.fields].sort() };
    } catch (e) {
      return { name: t.name, python: null, why: `it reads ${(e as Error).message}` };
    }
  });
}
