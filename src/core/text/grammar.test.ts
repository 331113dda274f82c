import { describe, expect, it } from 'vitest';
import { EOA, VOCAB, VOCAB_SIZE, encode } from './codec.ts';
import { DIGITS, GrammarMatcher, call, chars, fullMask, grammar, lit, maskHas, maskWords, oneOf, rep, seq } from './grammar.ts';

const allowedTexts = (m: GrammarMatcher, prefix: string, tokensLeft?: number): string[] => {
  const bits = m.mask(prefix, tokensLeft);
  const out: string[] = [];
  for (let v = 0; v < VOCAB_SIZE; v++) if (maskHas(bits, 0, v)) out.push(VOCAB[v]);
  return out.sort();
};

describe('GrammarMatcher', () => {
  // Worked by hand: `f(` then one of "ab", "ac", or 1..2 digits, then `)`.
  const g = grammar([call('f', oneOf(['ab', 'ac'])), call('f', chars(DIGITS, 1, 2))]);
  const m = new GrammarMatcher(g);

  it('accepts exactly the listed strings', () => {
    for (const s of ['f(ab)', 'f(ac)', 'f(7)', 'f(42)']) expect(m.accepts(s)).toBe(true);
    for (const s of ['f()', 'f(a)', 'f(abc)', 'f(123)', 'f(ab', 'g(ab)', 'f(ab))']) expect(m.accepts(s)).toBe(false);
  });

  it('masks to the characters that keep a viable prefix, and <eoa> only on a complete action', () => {
    expect(allowedTexts(m, '')).toEqual(['f']);
    expect(allowedTexts(m, 'f(')).toEqual([...DIGITS, 'a'].sort());
    expect(allowedTexts(m, 'f(a')).toEqual(['b', 'c']);
    expect(allowedTexts(m, 'f(4')).toEqual([')', ...DIGITS].sort());
    expect(allowedTexts(m, 'f(42')).toEqual([')']);
    expect(allowedTexts(m, 'f(42)')).toEqual(['<eoa>']);
    expect(allowedTexts(m, 'x')).toEqual([]);
  });

  it('checks a word token as a whole: calc( is allowed where its five characters fit', () => {
    const c = new GrammarMatcher(grammar([call('calc', chars(DIGITS, 1, 3)), call('call', lit('k1'))]));
    const start = allowedTexts(c, '');
    expect(start).toContain('calc(');
    expect(start).toContain('call(');
    expect(start).toContain('c');
    expect(start).not.toContain('answer(');
    // After "ca" only "l" continues; the word tokens starting with "c" do not fit mid-word.
    expect(allowedTexts(c, 'ca')).toEqual(['l']);
    // The expert's encoding (word tokens) decodes through the mask.
    const ids = encode('calc(12)');
    let text = '';
    for (const id of ids) {
      expect(maskHas(c.mask(text), 0, id)).toBe(true);
      text += VOCAB[id];
    }
    expect(maskHas(c.mask(text), 0, EOA)).toBe(true);
  });

  it('prunes branches that cannot complete: an empty enum and the length limit', () => {
    const e = new GrammarMatcher(grammar([call('answer', oneOf([])), call('next')]));
    // "answer(" is a word token but nothing may follow it: masked.
    expect(allowedTexts(e, '')).toEqual(['n']);
    const short = new GrammarMatcher(grammar([call('f', chars(DIGITS, 1, 20))], 5));
    // f(1) is 4 characters, f(12) 5: a third digit could never be closed within 5.
    expect(allowedTexts(short, 'f(1')).toEqual([')', ...DIGITS].sort());
    expect(allowedTexts(short, 'f(12')).toEqual([')']);
    expect(short.accepts('f(123)')).toBe(false);
  });

  it('a token budget keeps room to close the action: with 3 tokens left only a digit that can still close, or ")"', () => {
    const c = new GrammarMatcher(grammar([call('f', chars(DIGITS, 1, 20))]));
    // After "f(1": a digit leaves ")" and <eoa> to come (3 tokens with it); ")" leaves <eoa>.
    expect(allowedTexts(c, 'f(1', 3)).toEqual([')', ...DIGITS].sort());
    expect(allowedTexts(c, 'f(1', 2)).toEqual([')']);
    expect(allowedTexts(c, 'f(1)', 1)).toEqual(['<eoa>']);
    // Unbudgeted, the same prefix allows every digit and ")".
    expect(allowedTexts(c, 'f(1')).toEqual([')', ...DIGITS].sort());
  });

  it('bounded repetition: an expression of 1..3 numbers joined by + or *', () => {
    const num = chars(DIGITS, 1, 2);
    const r = new GrammarMatcher(grammar([seq(num, rep(seq(chars('+*', 1, 1), num), 0, 2))]));
    for (const s of ['1', '12+3', '1*2+33']) expect(r.accepts(s)).toBe(true);
    for (const s of ['', '+1', '1+', '1+2+3+4', '123']) expect(r.accepts(s)).toBe(false);
    expect(allowedTexts(r, '1*2+33')).toEqual(['<eoa>']);
  });

  it('packs the full mask one bit per token', () => {
    const f = fullMask();
    expect(f.length).toBe(maskWords());
    for (let v = 0; v < VOCAB_SIZE; v++) expect(maskHas(f, 0, v)).toBe(true);
    expect(maskHas(f, 0, VOCAB_SIZE)).toBe(false);
  });
});
