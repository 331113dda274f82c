/**
 * Base64 (RFC 4648, with padding) of raw bytes, and float32 arrays as little-endian bytes in it:
 * how checkpoint tensors travel inside JSON files. Written out here because the core has no
 * Buffer (Node) and btoa/atob work on binary strings that cost a copy per character.
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DECODE = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

export function bytesToBase64(bytes: Uint8Array): string {
  const parts: string[] = [];
  const CHUNK = 3 * 4096;
  for (let start = 0; start < bytes.length; start += CHUNK) {
    const end = Math.min(bytes.length, start + CHUNK);
    let s = '';
    for (let i = start; i < end; i += 3) {
      const n = (bytes[i] << 16) | ((i + 1 < end ? bytes[i + 1] : 0) << 8) | (i + 2 < end ? bytes[i + 2] : 0);
      s += ALPHABET[(n >> 18) & 63] + ALPHABET[(n >> 12) & 63] + (i + 1 < end ? ALPHABET[(n >> 6) & 63] : '=') + (i + 2 < end ? ALPHABET[n & 63] : '=');
    }
    parts.push(s);
  }
  return parts.join('');
}

/** Decodes base64; throws a RangeError naming the first bad character or a bad length. */
export function base64ToBytes(text: string): Uint8Array {
  if (text.length % 4 !== 0) throw new RangeError(`not base64: length ${text.length} is not a multiple of 4`);
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    let n = 0;
    for (let k = 0; k < 4; k++) {
      const c = text.charCodeAt(i + k);
      const last = i + 4 === text.length;
      if (c === 61 /* = */ && last && k >= 4 - pad) {
        n <<= 6;
        continue;
      }
      const v = c < 128 ? DECODE[c] : -1;
      if (v < 0) throw new RangeError(`not base64: character ${JSON.stringify(text[i + k])} at ${i + k}`);
      n = (n << 6) | v;
    }
    out[o++] = (n >> 16) & 255;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  return out;
}

const littleEndian = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/** A float32 array as base64 of its little-endian bytes (bit-exact for every finite value, ±0 and ±Inf). */
export function float32ToBase64(a: Float32Array): string {
  const bytes = new Uint8Array(a.length * 4);
  const view = new DataView(bytes.buffer);
  if (littleEndian) bytes.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  else for (let i = 0; i < a.length; i++) view.setFloat32(i * 4, a[i], true);
  return bytesToBase64(bytes);
}

/** The inverse of float32ToBase64; throws when the bytes are not whole float32 values. */
export function base64ToFloat32(text: string): Float32Array {
  const bytes = base64ToBytes(text);
  if (bytes.length % 4 !== 0) throw new RangeError(`${bytes.length} bytes are not whole float32 values`);
  const view = new DataView(bytes.buffer);
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}
