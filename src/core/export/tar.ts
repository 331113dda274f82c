/**
 * A folder of text files as one POSIX ustar archive, so the page can hand an export over as one
 * download (`tar -xf NAME.tar` gives the folder). Files only, under one top folder; names up to
 * 100 bytes, contents UTF-8; each file's mode 0644, or 0755 for `.sh`.
 */

const BLOCK = 512;

function field(h: Uint8Array, at: number, len: number, text: string): void {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length > len) throw new RangeError(`tar: '${text}' does not fit ${len} bytes`);
  h.set(bytes, at);
}

/** Octal, zero-padded to len − 1 digits and a NUL, as ustar numeric fields are. */
const octal = (n: number, len: number) => n.toString(8).padStart(len - 1, '0');

function header(name: string, size: number, mtimeS: number): Uint8Array {
  const h = new Uint8Array(BLOCK);
  field(h, 0, 100, name);
  field(h, 100, 8, octal(name.endsWith('.sh') ? 0o755 : 0o644, 8));
  field(h, 108, 8, octal(0, 8));
  field(h, 116, 8, octal(0, 8));
  field(h, 124, 12, octal(size, 12));
  field(h, 136, 12, octal(mtimeS, 12));
  field(h, 148, 8, '        '); // checksum counted as spaces
  h[156] = '0'.charCodeAt(0); // regular file
  field(h, 257, 6, 'ustar');
  field(h, 263, 2, '00');
  let sum = 0;
  for (const b of h) sum += b;
  field(h, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return h;
}

/** The archive of `files` (name → text) under `folder/`. */
export function tarFolder(folder: string, files: Readonly<Record<string, string>>, mtimeMs = Date.now()): Uint8Array {
  const parts: Uint8Array[] = [];
  const mtime = Math.floor(mtimeMs / 1000);
  for (const [name, text] of Object.entries(files)) {
    const body = new TextEncoder().encode(text);
    parts.push(header(`${folder}/${name}`, body.length, mtime), body, new Uint8Array((BLOCK - (body.length % BLOCK)) % BLOCK));
  }
  parts.push(new Uint8Array(2 * BLOCK)); // two zero blocks end the archive
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
