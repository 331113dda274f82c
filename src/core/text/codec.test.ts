import { describe, expect, it } from 'vitest';
import { BOS, CHARSET, CodecError, decode, encode, EOA, sanitize, UNK, VOCAB, VOCAB_SIZE } from './codec.ts';
import { Rng } from '../util/rng.ts';

describe('text codec', () => {
  it('round-trips every printable character and newline', () => {
    expect(decode(encode(CHARSET))).toBe(CHARSET);
  });

  it('round-trips random vocabulary strings, with and without word tokens', () => {
    const rng = new Rng(3);
    const pieces = [...CHARSET.split(''), 'calc(', 'answer(', 'lookup(', 'call('];
    for (let n = 0; n < 200; n++) {
      let s = '';
      const len = rng.int(0, 40);
      for (let i = 0; i < len; i++) s += rng.choice(pieces);
      expect(decode(encode(s))).toBe(s);
      expect(decode(encode(s, { words: false }))).toBe(s);
    }
  });

  it('uses one token for a tool-call head', () => {
    const ids = encode('calc(12*34)');
    expect(ids.length).toBe(1 + 5 + 1);
    expect(VOCAB[ids[0]]).toBe('calc(');
    expect(encode('calc(12*34)', { words: false }).length).toBe(11);
  });

  it('rejects characters outside the vocabulary with their position', () => {
    expect(() => encode('ab\u00e9c')).toThrow(CodecError);
    try {
      encode('ab\u00e9c');
    } catch (e) {
      expect((e as CodecError).index).toBe(2);
      expect((e as Error).message).toMatch(/U\+00E9.*position 2/);
    }
  });

  it('maps unknown characters to <unk> when asked, one per code point', () => {
    const ids = encode('a\u00e9\u{1F600}b', { unknown: 'unk' });
    expect(ids.filter((x) => x === UNK).length).toBe(2);
    expect(decode(ids)).toBe('a<unk><unk>b');
  });

  it('renders specials by name, or drops them', () => {
    expect(decode([BOS, ...encode('hi'), EOA])).toBe('<bos>hi<eoa>');
    expect(decode([BOS, ...encode('hi'), EOA], { skipSpecial: true })).toBe('hi');
    expect(() => decode([VOCAB_SIZE])).toThrow(RangeError);
  });

  it('sanitizes text into the vocabulary', () => {
    expect(sanitize('caf\u00e9 \u2192 ok')).toBe('caf? ? ok');
  });
});
