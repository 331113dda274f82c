/**
 * The shared token vocabulary for text policies: tool envs and the grid text rendering both
 * speak it. Character level (printable ASCII and newline) plus a few whole-word tokens for
 * tool-call heads, so a tiny policy spends its capacity on arguments, not on spelling.
 *
 * Token ids are the training data (TITO, token-in token-out): the trainer never re-tokenizes text, so
 * this table is append-only. Changing an existing id breaks saved policies.
 */

export const PAD = 0;
/** Start of an episode's context. */
export const BOS = 1;
/** End of the agent's action: generation stops here and the text goes to the env. */
export const EOA = 2;
/** Start of an environment observation inside the context. */
export const OBS = 3;
/** Stand-in for a character outside the vocabulary (lenient encoding only). */
export const UNK = 4;

export const SPECIAL_TOKENS = ['<pad>', '<bos>', '<eoa>', '<obs>', '<unk>'] as const;

/** Whole-word tokens, matched greedily before single characters. */
export const WORD_TOKENS = ['calc(', 'answer(', 'lookup(', 'call(', 'retry(', 'error:', 'result:'] as const;

const CHARS: string[] = ['\n'];
for (let c = 32; c <= 126; c++) CHARS.push(String.fromCharCode(c));

/** id -> token string (specials in angle brackets). */
export const VOCAB: readonly string[] = [...SPECIAL_TOKENS, ...WORD_TOKENS, ...CHARS];
export const VOCAB_SIZE = VOCAB.length;

/** Every character the vocabulary can spell; text spaces and renderers stay inside it. */
export const CHARSET = CHARS.join('');

const charId = new Map<string, number>();
CHARS.forEach((ch, i) => charId.set(ch, SPECIAL_TOKENS.length + WORD_TOKENS.length + i));
const wordsByFirstChar = new Map<string, { word: string; id: number }[]>();
WORD_TOKENS.forEach((word, i) => {
  const list = wordsByFirstChar.get(word[0]) ?? [];
  list.push({ word, id: SPECIAL_TOKENS.length + i });
  list.sort((a, b) => b.word.length - a.word.length);
  wordsByFirstChar.set(word[0], list);
});

export class CodecError extends Error {
  constructor(
    message: string,
    /** Index of the offending character in the input string. */
    readonly index: number,
  ) {
    super(message);
    this.name = 'CodecError';
  }
}

export interface EncodeOptions {
  /**
   * What to do with a character outside the vocabulary: 'error' (default) throws a CodecError
   * naming the character and its position; 'unk' maps it to <unk>.
   */
  unknown?: 'error' | 'unk';
  /** Use whole-word tokens (default true). False spells everything character by character. */
  words?: boolean;
}

export function encode(text: string, options: EncodeOptions = {}): number[] {
  const out: number[] = [];
  const useWords = options.words ?? true;
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (useWords) {
      const cands = wordsByFirstChar.get(ch);
      const hit = cands?.find((w) => text.startsWith(w.word, i));
      if (hit) {
        out.push(hit.id);
        i += hit.word.length;
        continue;
      }
    }
    const id = charId.get(ch);
    if (id === undefined) {
      if (options.unknown === 'unk') {
        out.push(UNK);
        // Skip a whole surrogate pair so one emoji is one <unk>.
        i += text.codePointAt(i)! > 0xffff ? 2 : 1;
        continue;
      }
      const cp = text.codePointAt(i)!;
      throw new CodecError(
        `character ${JSON.stringify(String.fromCodePoint(cp))} (U+${cp.toString(16).toUpperCase().padStart(4, '0')}) at position ${i} is not in the vocabulary (printable ASCII and newline)`,
        i,
      );
    }
    out.push(id);
    i++;
  }
  return out;
}

/** Ids back to text. Specials render as `<name>` unless `skipSpecial` (then dropped). */
export function decode(ids: ArrayLike<number>, options: { skipSpecial?: boolean } = {}): string {
  let s = '';
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k];
    if (!Number.isInteger(id) || id < 0 || id >= VOCAB_SIZE) throw new RangeError(`token id ${id} at ${k} is outside 0..${VOCAB_SIZE - 1}`);
    if (id < SPECIAL_TOKENS.length) {
      if (!options.skipSpecial) s += VOCAB[id];
    } else s += VOCAB[id];
  }
  return s;
}

/** The printable form of one token (for token-coloured transcripts). */
export function tokenText(id: number): string {
  return VOCAB[id] ?? `<${id}?>`;
}

/** Replaces characters outside the vocabulary with '?', for renderers that must stay inside it. */
export function sanitize(text: string): string {
  let s = '';
  for (const ch of text) s += charId.has(ch) ? ch : '?';
  return s;
}
