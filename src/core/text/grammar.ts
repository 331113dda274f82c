/**
 * Action grammars: what a tool env accepts as one action at its current state, as a small
 * regular pattern (literals, enums of strings, character classes with a length range, bounded
 * repetition), and the per-position vocabulary mask that constrained decoding samples under.
 *
 * A pattern compiles to an NFA over characters. Given the text of the action's tokens so far,
 * a token is allowed when appending its whole text (a word token like `calc(` spells several
 * characters and is checked as a whole) keeps the text a viable prefix of the pattern; <eoa> is
 * allowed only when the text is a complete match; the other specials never are. "Viable" means
 * some completion exists within the grammar's maxLength: branches that cannot be completed (an
 * enum with no values yet, an arg too long to close) are pruned. Masks are bit
 * sets over the codec's vocabulary, ceil(V / 32) words per position (bit v of word v >> 5).
 *
 * Everything here is bounded (no unbounded repetition): an action grammar describes strings of
 * at most the action limit, so the NFA is finite and small (a few hundred nodes at most).
 */
import { EOA, SPECIAL_TOKENS, VOCAB, VOCAB_SIZE } from './codec.ts';

export type Pattern =
  | { kind: 'lit'; text: string }
  | { kind: 'alt'; of: readonly Pattern[] }
  | { kind: 'seq'; of: readonly Pattern[] }
  /** `min`..`max` characters, each one of `set`. */
  | { kind: 'chars'; set: string; min: number; max: number }
  /** `min`..`max` repetitions of `of`. */
  | { kind: 'rep'; of: Pattern; min: number; max: number };

/** One action as a pattern: the alternatives an env accepts at its current state. */
export interface ActionGrammar {
  pattern: Pattern;
  /** Longest accepted action, characters (the env's action limit); default unbounded. */
  maxLength?: number;
}

export const lit = (text: string): Pattern => ({ kind: 'lit', text });
export const alt = (...of: Pattern[]): Pattern => ({ kind: 'alt', of });
export const seq = (...of: Pattern[]): Pattern => ({ kind: 'seq', of });
/** Exactly one of `values` (an empty list matches nothing). */
export const oneOf = (values: readonly string[]): Pattern => alt(...[...new Set(values)].map(lit));
export const chars = (set: string, min: number, max: number): Pattern => {
  if (!(Number.isInteger(min) && Number.isInteger(max) && min >= 0 && max >= min)) throw new RangeError(`chars: need 0 ≤ min ≤ max, got ${min}..${max}`);
  return { kind: 'chars', set, min, max };
};
export const rep = (of: Pattern, min: number, max: number): Pattern => {
  if (!(Number.isInteger(min) && Number.isInteger(max) && min >= 0 && max >= min)) throw new RangeError(`rep: need 0 ≤ min ≤ max, got ${min}..${max}`);
  return { kind: 'rep', of, min, max };
};
/** A tool call `name(` + args + `)`; no args is `name()`. */
export const call = (name: string, ...args: Pattern[]): Pattern => seq(lit(`${name}(`), ...args, lit(')'));
/** The grammar of an action: any one of `alternatives` (none: nothing is accepted). */
export const grammar = (alternatives: readonly Pattern[], maxLength?: number): ActionGrammar => ({ pattern: alt(...alternatives), ...(maxLength === undefined ? {} : { maxLength }) });

export const DIGITS = '0123456789';

/** Words per position of a packed mask over `vocab` tokens. */
export const maskWords = (vocab: number = VOCAB_SIZE): number => Math.ceil(vocab / 32);

/** Is token `id` allowed in the packed mask starting at word `offset`? */
export const maskHas = (bits: Uint32Array, offset: number, id: number): boolean => ((bits[offset + (id >>> 5)] >>> (id & 31)) & 1) === 1;

/** A mask that allows every one of `vocab` tokens (positions where nothing was constrained). */
export function fullMask(vocab: number = VOCAB_SIZE): Uint32Array {
  const m = new Uint32Array(maskWords(vocab));
  for (let v = 0; v < vocab; v++) m[v >>> 5] |= 1 << (v & 31);
  return m;
}

/** Thompson NFA: per node, ε-edges and character moves. */
class Nfa {
  readonly eps: number[][] = [];
  readonly moves: { set: string; to: number }[][] = [];
  node(): number {
    this.eps.push([]);
    this.moves.push([]);
    return this.eps.length - 1;
  }
  /** Adds `p` starting at node `from`; returns its end node. */
  build(p: Pattern, from: number): number {
    switch (p.kind) {
      case 'lit': {
        let cur = from;
        for (const ch of p.text) {
          const nx = this.node();
          this.moves[cur].push({ set: ch, to: nx });
          cur = nx;
        }
        return cur;
      }
      case 'seq':
        return p.of.reduce((cur, q) => this.build(q, cur), from);
      case 'alt': {
        const end = this.node();
        for (const q of p.of) this.eps[this.build(q, from)].push(end);
        return end;
      }
      case 'chars': {
        const end = this.node();
        let cur = from;
        for (let i = 0; i <= p.max; i++) {
          if (i >= p.min) this.eps[cur].push(end);
          if (i === p.max) break;
          const nx = this.node();
          this.moves[cur].push({ set: p.set, to: nx });
          cur = nx;
        }
        return end;
      }
      case 'rep': {
        const end = this.node();
        let cur = from;
        for (let i = 0; i <= p.max; i++) {
          if (i >= p.min) this.eps[cur].push(end);
          if (i === p.max) break;
          // A fresh entry node per copy, so a copy's moves never leak into the ε-exit above.
          const entry = this.node();
          this.eps[cur].push(entry);
          cur = this.build(p.of, entry);
        }
        return end;
      }
    }
  }
}

/** Most prefixes whose masks one compiled grammar keeps (a turn's actions share few prefixes). */
const PREFIX_CACHE = 512;

/** A compiled action grammar: prefix checks and vocabulary masks, cached per prefix. */
export class GrammarMatcher {
  private readonly nfa = new Nfa();
  private readonly start: number;
  private readonly accept: number;
  private readonly startSet: Int32Array;
  /** Per node: fewest characters from it to a complete action (Infinity: none). */
  private readonly dist: Float64Array;
  private readonly maxLength: number;
  private readonly masks = new Map<string, Uint32Array>();

  constructor(
    readonly grammar: ActionGrammar,
    /** Tokens in the mask: the decoder's vocabulary (the codec's, or a prefix of it). */
    readonly vocab: number = VOCAB_SIZE,
  ) {
    this.start = this.nfa.node();
    this.accept = this.nfa.build(grammar.pattern, this.start);
    this.startSet = this.closure([this.start]);
    this.dist = this.distances();
    this.maxLength = grammar.maxLength ?? Infinity;
  }

  /** Shortest distance (characters) from every node to the accept node: Dijkstra on 0/1 edges, backwards. */
  private distances(): Float64Array {
    const { eps, moves } = this.nfa;
    const n = eps.length;
    const back: { from: number; w: number }[][] = Array.from({ length: n }, () => []);
    for (let a = 0; a < n; a++) {
      for (const b of eps[a]) back[b].push({ from: a, w: 0 });
      for (const mv of moves[a]) back[mv.to].push({ from: a, w: 1 });
    }
    const d = new Float64Array(n).fill(Infinity);
    d[this.accept] = 0;
    // 0-1 BFS with a deque (array + head index; front insertions go to a separate stack).
    const front: number[] = [this.accept];
    const rear: number[] = [];
    let head = 0;
    while (front.length > 0 || head < rear.length) {
      const u = front.length > 0 ? front.pop()! : rear[head++];
      for (const { from, w } of back[u]) {
        if (d[u] + w < d[from]) {
          d[from] = d[u] + w;
          if (w === 0) front.push(from);
          else rear.push(from);
        }
      }
    }
    return d;
  }

  /**
   * Fewest characters that complete an action from `states` (reached after `len` characters)
   * within maxLength; Infinity when none does.
   */
  private need(states: Int32Array, len: number): number {
    let best = Infinity;
    for (const s of states) if (this.dist[s] !== Infinity && len + this.dist[s] <= this.maxLength) best = Math.min(best, this.dist[s]);
    return best;
  }

  /** Can some state of `states`, reached after `len` characters, still complete within maxLength? */
  private live(states: Int32Array, len: number): boolean {
    return this.need(states, len) !== Infinity;
  }

  /** The ε-closure of `nodes`, sorted. */
  private closure(nodes: readonly number[]): Int32Array {
    const seen = new Set<number>(nodes);
    const stack = [...nodes];
    while (stack.length > 0) {
      const n = stack.pop()!;
      for (const m of this.nfa.eps[n]) {
        if (!seen.has(m)) {
          seen.add(m);
          stack.push(m);
        }
      }
    }
    return Int32Array.from(seen).sort();
  }

  /** The states after reading `text` from `states` (empty when `text` leaves the language). */
  private advance(states: Int32Array, text: string): Int32Array {
    let cur = states;
    for (const ch of text) {
      const next: number[] = [];
      for (const n of cur) for (const mv of this.nfa.moves[n]) if (mv.set.includes(ch)) next.push(mv.to);
      if (next.length === 0) return new Int32Array(0);
      cur = this.closure(next);
    }
    return cur;
  }

  /** Is `text` a prefix of some accepted action (the empty text is)? */
  viable(text: string): boolean {
    return this.live(this.advance(this.startSet, text), text.length);
  }

  /** Is `text` a whole accepted action? */
  accepts(text: string): boolean {
    return text.length <= this.maxLength && this.advance(this.startSet, text).includes(this.accept);
  }

  /**
   * The packed mask [maskWords(vocab)] of tokens allowed after the action text `prefix`: those
   * whose text keeps it viable, and <eoa> when it is complete. `tokensLeft` (the action's token
   * budget from here, <eoa> included) also drops tokens after which the shortest completion,
   * spelled one character per token, would not fit: the action then ends with <eoa> before the
   * loop cuts it (a forced end is malformed). Where that leaves nothing (word tokens would fit
   * where characters do not), the budget is ignored. Cached; callers must not modify the result.
   */
  mask(prefix: string, tokensLeft = Infinity): Uint32Array {
    const budget = Math.min(tokensLeft, this.maxLength + 2);
    const key = `${budget}|${prefix}`;
    let m = this.masks.get(key);
    if (m) return m;
    m = this.build(prefix, budget);
    if (budget !== Infinity && m.every((w) => w === 0)) m = this.build(prefix, Infinity);
    if (this.masks.size >= PREFIX_CACHE) this.masks.clear();
    this.masks.set(key, m);
    return m;
  }

  private build(prefix: string, budget: number): Uint32Array {
    const m = new Uint32Array(maskWords(this.vocab));
    const states = this.advance(this.startSet, prefix);
    if (!this.live(states, prefix.length)) return m;
    if (states.includes(this.accept) && prefix.length <= this.maxLength && EOA < this.vocab) m[EOA >>> 5] |= 1 << (EOA & 31);
    for (let v = SPECIAL_TOKENS.length; v < this.vocab; v++) {
      // After v: its own slot, then the completion and <eoa>.
      const need = this.need(this.advance(states, VOCAB[v]), prefix.length + VOCAB[v].length);
      if (need !== Infinity && need + 2 <= budget) m[v >>> 5] |= 1 << (v & 31);
    }
    return m;
  }
}

/** Most compiled grammars kept (a batch's episodes at equal states share one). */
const GRAMMAR_CACHE = 256;
const compiled = new Map<string, GrammarMatcher>();

/**
 * The matcher of `g` over `vocab` tokens, shared by every caller with an equal grammar (the rows
 * of a GRPO group meet the same states, so their prefixes' masks are computed once).
 */
export function matcherFor(g: ActionGrammar, vocab: number = VOCAB_SIZE): GrammarMatcher {
  const key = `${vocab}|${JSON.stringify(g.pattern)}`;
  let m = compiled.get(key);
  if (!m) {
    if (compiled.size >= GRAMMAR_CACHE) compiled.clear();
    m = new GrammarMatcher(g, vocab);
    compiled.set(key, m);
  }
  return m;
}
