/**
 * A light reading of a code env's source, for the check's line reports (checkCodeEnv.ts) and the
 * checking sandbox's loop counters: tokens with their lines (strings, template literals, comments
 * and regular expressions skipped as single tokens), the loops, the span of an exported
 * function's body, the module's top-level bindings and the lines that change one.
 *
 * It is not a parser: it reads the shapes a person writes (it decides regex vs division from the
 * token before, as most highlighters do). Its results only choose a line for a message or add a
 * counter; every consumer has a fallback when a shape is not recognised (the sandbox loads the
 * plain module when an instrumented one does not compile).
 */

export interface Token {
  /** The token's text ('"…"', '`…`' and '/…/' are whole literals). */
  text: string;
  /** 1-based line of its first character. */
  line: number;
  /** Offset of its first character in the source. */
  at: number;
  /** Offset just past it. */
  end: number;
  /** Bracket depth ((, [, {) before it. */
  depth: number;
}

const ID = /[A-Za-z0-9_$\u0080-\uffff]/;
const PUNCT = ['>>>=', '...', '===', '!==', '**=', '<<=', '>>=', '>>>', '&&=', '||=', '??=', '=>', '==', '!=', '<=', '>=', '&&', '||', '??', '?.', '++', '--', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '**', '<<', '>>'];
/** Tokens after which a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set(['(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>', '~', '^', '=>', '==', '===', '!=', '!==', '&&', '||', '??', 'return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', '+=', '-=', '*=', '/=', '%=']);

/** The source as tokens (whitespace and comments dropped). */
export function tokenize(code: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let line = 1;
  let depth = 0;
  const n = code.length;
  const push = (from: number, startLine: number) => out.push({ text: code.slice(from, i), line: startLine, at: from, end: i, depth });
  const advance = (to: number) => {
    for (; i < to && i < n; i++) if (code[i] === '\n') line++;
  };
  while (i < n) {
    const c = code[i];
    if (c === '\n') {
      line++;
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v') i++;
    else if (c === '/' && code[i + 1] === '/') {
      while (i < n && code[i] !== '\n') i++;
    } else if (c === '/' && code[i + 1] === '*') {
      const e = code.indexOf('*/', i + 2);
      advance(e < 0 ? n : e + 2);
    } else if (c === '"' || c === "'") {
      const from = i, l = line;
      i++;
      while (i < n && code[i] !== c && code[i] !== '\n') i += code[i] === '\\' ? 2 : 1;
      i++;
      push(from, l);
    } else if (c === '`') {
      const from = i, l = line;
      i++;
      // ${…} nesting inside a template: counted by braces (a '}' in a nested string is rare enough here).
      let inner = 0;
      while (i < n) {
        const d = code[i];
        if (d === '\\') advance(i + 2);
        else if (inner === 0 && d === '`') break;
        else if (d === '$' && code[i + 1] === '{') {
          inner++;
          i += 2;
        } else {
          if (inner > 0 && d === '}') inner--;
          else if (inner > 0 && d === '{') inner++;
          advance(i + 1);
        }
      }
      i++;
      push(from, l);
    } else if (c === '/' && (out.length === 0 || BEFORE_REGEX.has(out[out.length - 1].text))) {
      const from = i, l = line;
      i++;
      let cls = false;
      while (i < n && code[i] !== '\n') {
        const d = code[i];
        if (d === '\\') i++;
        else if (d === '[') cls = true;
        else if (d === ']') cls = false;
        else if (d === '/' && !cls) break;
        i++;
      }
      i++;
      while (i < n && ID.test(code[i])) i++;
      push(from, l);
    } else if (ID.test(c)) {
      const from = i;
      while (i < n && (ID.test(code[i]) || (code[i] === '.' && /[0-9]/.test(c)))) i++;
      push(from, line);
    } else {
      const from = i;
      const p = PUNCT.find((q) => code.startsWith(q, i));
      i += p ? p.length : 1;
      if (c === ')' || c === ']' || c === '}') depth = Math.max(0, depth - 1);
      push(from, line);
      if (c === '(' || c === '[' || c === '{') depth++;
    }
  }
  return out;
}

/** Index of the token closing the bracket at `open` (or the last token). */
function closing(toks: readonly Token[], open: number): number {
  const d = toks[open].depth;
  for (let k = open + 1; k < toks.length; k++) if (toks[k].depth === d && /^[)\]}]$/.test(toks[k].text)) return k;
  return toks.length - 1;
}

const keywordAt = (toks: readonly Token[], k: number, word: string): boolean =>
  toks[k].text === word && (k === 0 || (toks[k - 1].text !== '.' && toks[k - 1].text !== '?.')) && toks[k + 1]?.text !== ':';

/** One loop statement of the source. */
export interface Loop {
  kind: 'for' | 'for-in-of' | 'while' | 'do';
  /** 1-based line of its keyword. */
  line: number;
  /** Token index of the keyword. */
  keyword: number;
  /** Token indices of the header's parentheses (for a do-while: of its `while (…)`), or -1. */
  open: number;
  close: number;
  /** Token index of `;` separators in a for(;;) header. */
  semis: number[];
  /** Token index of `in`/`of` in a for-in/of header. */
  inOf: number;
  /** Token index of the body's `{`, or -1 when the body is a single statement. */
  brace: number;
}

/** The loops of the source, in source order. */
export function findLoops(toks: readonly Token[]): Loop[] {
  const loops: Loop[] = [];
  /** `while` tokens that end a do-while (not loops of their own). */
  const doWhile = new Set<number>();
  for (let k = 0; k < toks.length; k++) {
    if (keywordAt(toks, k, 'do')) {
      const body = k + 1;
      let after: number;
      if (toks[body]?.text === '{') after = closing(toks, body) + 1;
      else {
        after = body;
        while (after < toks.length && !(toks[after].text === ';' && toks[after].depth === toks[k].depth)) after++;
        after++;
      }
      if (toks[after]?.text === 'while' && toks[after + 1]?.text === '(') {
        doWhile.add(after);
        loops.push({ kind: 'do', line: toks[k].line, keyword: k, open: after + 1, close: closing(toks, after + 1), semis: [], inOf: -1, brace: toks[body]?.text === '{' ? body : -1 });
      }
    } else if ((keywordAt(toks, k, 'while') && !doWhile.has(k)) || keywordAt(toks, k, 'for')) {
      const open = k + 1;
      if (toks[open]?.text !== '(') continue; // `for await`, or not a statement
      const close = closing(toks, open);
      const inner = toks[open].depth + 1;
      const semis: number[] = [];
      let inOf = -1;
      for (let j = open + 1; j < close; j++) {
        if (toks[j].depth !== inner) continue;
        if (toks[j].text === ';') semis.push(j);
        else if (inOf < 0 && semis.length === 0 && (toks[j].text === 'of' || toks[j].text === 'in')) inOf = j;
      }
      const word = toks[k].text;
      const kind = word === 'while' ? 'while' : semis.length === 2 ? 'for' : 'for-in-of';
      if (word === 'for' && kind === 'for-in-of' && inOf < 0) continue;
      loops.push({ kind, line: toks[k].line, keyword: k, open, close, semis, inOf: kind === 'for-in-of' ? inOf : -1, brace: toks[close + 1]?.text === '{' ? close + 1 : -1 });
    }
  }
  return loops;
}

/**
 * The source with a counter on every loop it recognises, on the same lines (for the checking
 * sandbox: which loop ran away when a call hits its deadline). `counter` is an array expression
 * in scope; loop i counts the iterations of its current run in `counter[i]` (reset as the loop
 * starts; a do-while's and a braceless for-in/of's count are not reset, they add up over the call).
 * Returns the loops' lines, index i = counter i.
 */
export function instrumentLoops(code: string, counter: string): { code: string; lines: number[] } {
  const toks = tokenize(code);
  const loops = findLoops(toks);
  /** Insertions: offset → text (inserted before the character at offset). */
  const ins: [number, string][] = [];
  const c = (i: number) => `${counter}[${i}]`;
  loops.forEach((l, i) => {
    if (l.kind === 'while') {
      // while (C) S  ≡  for (reset; count, (C); ) S — same semantics, an entry slot for the reset.
      ins.push([toks[l.keyword].at, '/*']);
      ins.push([toks[l.keyword].end, `*/for`]);
      ins.push([toks[l.open].end, `${c(i)} = 0; (++${c(i)}, (`]);
      ins.push([toks[l.close].at, ')); ']);
    } else if (l.kind === 'do') {
      ins.push([toks[l.open].end, `++${c(i)}, (`]);
      ins.push([toks[l.close].at, ')']);
    } else if (l.kind === 'for') {
      const [s1, s2] = l.semis;
      const first = toks[l.open + 1];
      if (s1 === l.open + 1) ins.push([toks[s1].at, `${c(i)} = 0`]);
      else if (first.text === 'let' || first.text === 'const' || first.text === 'var') ins.push([first.end, ` __loop${i} = (${c(i)} = 0),`]);
      else {
        ins.push([first.at, `${c(i)} = 0, (`]);
        ins.push([toks[s1].at, ')']);
      }
      if (s2 === s1 + 1) ins.push([toks[s2].at, `++${c(i)}`]);
      else {
        ins.push([toks[s1].end, ` (++${c(i)}, (`]);
        ins.push([toks[s2].at, '))']);
      }
    } else {
      // for (x of E) — E is evaluated once, as the loop starts.
      ins.push([toks[l.inOf].end, ` (${c(i)} = 0, (`]);
      ins.push([toks[l.close].at, '))']);
      if (l.brace >= 0) ins.push([toks[l.brace].end, ` ++${c(i)};`]);
    }
  });
  ins.sort((a, b) => a[0] - b[0]);
  let out = '';
  let from = 0;
  for (const [at, text] of ins) {
    out += code.slice(from, at) + text;
    from = at;
  }
  out += code.slice(from);
  return { code: out, lines: loops.map((l) => l.line) };
}

/** Token range [open brace, close brace] of `export function name`'s body, or null. */
function exportedBody(toks: readonly Token[], name: string): [number, number] | null {
  for (let k = 0; k + 2 < toks.length; k++) {
    if (toks[k].text !== 'export' || toks[k].depth !== 0) continue;
    let j = k + 1;
    if (toks[j].text === 'async') j++;
    if (toks[j].text !== 'function') continue;
    j++;
    if (toks[j].text === '*') j++;
    if (toks[j].text !== name || toks[j + 1]?.text !== '(') continue;
    const body = closing(toks, j + 1) + 1;
    if (toks[body]?.text !== '{') return null;
    return [body, closing(toks, body)];
  }
  return null;
}

/**
 * The line where `step` sets the reward it returns: an assignment to `reward` in its body, or a
 * `reward:` property; among several, one with a NaN-prone expression (NaN, Infinity, a division,
 * Math.log / Math.sqrt, a `**`), else the last. Null when none is found (then callers use the line of `step`).
 */
export function rewardLine(code: string): number | null {
  const toks = tokenize(code);
  const span = exportedBody(toks, 'step');
  if (span === null) return null;
  const found: { line: number; risky: boolean }[] = [];
  for (let k = span[0] + 1; k < span[1]; k++) {
    if (toks[k].text !== 'reward' || toks[k - 1].text === '.') continue;
    const next = toks[k + 1]?.text ?? '';
    if (!['=', '+=', '-=', '*=', '/=', ':'].includes(next)) continue;
    // The expression: to the end of the statement or property (a `;` or `,` at this depth, or the closing bracket).
    let risky = false;
    for (let j = k + 2; j < span[1]; j++) {
      const t = toks[j];
      if (t.depth < toks[k].depth || (t.depth === toks[k].depth && (t.text === ';' || t.text === ',' || t.text === '}'))) break;
      if (['NaN', 'Infinity', '/', '**', 'log', 'sqrt', 'log2', 'log10', 'pow', 'acos', 'asin'].includes(t.text)) risky = true;
    }
    found.push({ line: toks[k].line, risky });
  }
  if (found.length === 0) return null;
  return (found.find((f) => f.risky) ?? found[found.length - 1]).line;
}

/** Names the module declares at its top level (let/const/var, including several per statement and simple destructuring). */
export function topLevelBindings(code: string): { name: string; line: number }[] {
  const toks = tokenize(code);
  const out: { name: string; line: number }[] = [];
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k];
    if (t.depth !== 0 || !['let', 'const', 'var'].includes(t.text)) continue;
    // Each declarator: a name at depth 0 after the keyword or after a ',' at depth 0; stops at ';' or a new statement line.
    let expectName = true;
    for (let j = k + 1; j < toks.length; j++) {
      const u = toks[j];
      if (u.depth === 0 && u.text === ';') break;
      if (u.depth === 0 && ['function', 'export', 'let', 'const', 'var', 'class'].includes(u.text)) break;
      if (expectName && u.depth === 0) {
        if (/^[A-Za-z_$][\w$]*$/.test(u.text)) out.push({ name: u.text, line: u.line });
        expectName = false;
      } else if (u.depth === 0 && u.text === ',') expectName = true;
    }
  }
  return out;
}

/**
 * Lines that grow or change the binding `name` in place: `name.push(`, `name.unshift(`,
 * `name.set(`, `name.add(`, `name.splice(`, `name[…] =`, `name.x =`, `name +=`, `name = name.concat(`.
 * Source order.
 */
export function growthLines(code: string, name: string): number[] {
  const toks = tokenize(code);
  const lines: number[] = [];
  for (let k = 0; k < toks.length; k++) {
    if (toks[k].text !== name || (k > 0 && (toks[k - 1].text === '.' || toks[k - 1].text === '?.'))) continue;
    const next = toks[k + 1]?.text;
    let hit = false;
    if (next === '.' && ['push', 'unshift', 'set', 'add', 'splice', 'concat'].includes(toks[k + 2]?.text ?? '')) hit = true;
    else if (next === '+=') hit = true;
    else if (next === '[' || next === '.') {
      // name[…] = v  /  name.key = v  /  name.a.push(  (a growing inner list)
      let j = k + 1;
      while (j < toks.length && (toks[j].text === '[' || toks[j].text === '.')) {
        j = toks[j].text === '[' ? closing(toks, j) + 1 : j + 2;
        if (toks[j - 1]?.text && ['push', 'unshift', 'set', 'add', 'splice'].includes(toks[j - 1].text) && toks[j]?.text === '(') {
          hit = true;
          break;
        }
      }
      if (!hit && ['=', '+='].includes(toks[j]?.text ?? '')) hit = true;
    } else if (next === '=' && toks[k + 2]?.text === name && toks[k + 3]?.text === '.' && toks[k + 4]?.text === 'concat') hit = true;
    if (hit && !lines.includes(toks[k].line)) lines.push(toks[k].line);
  }
  return lines;
}
