/**
 * Lists the functions in src over a line limit (default 80), longest first, nested ones
 * included (a closure counts its inner functions' lines too). Test files are left out.
 * Usage: npx tsx scripts/longFunctions.ts [limit]
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { functionSpans, isTestFile, ROOT, sourceFiles } from '../src/architecture/sources.ts';

const limit = Number(process.argv[2] ?? 80);
const rows = sourceFiles(join(ROOT, 'src'))
  .filter((f) => !isTestFile(f))
  .flatMap((f) => functionSpans(f, readFileSync(f, 'utf8')).map((s) => ({ file: relative(ROOT, f), ...s })))
  .filter((r) => r.lines > limit)
  .sort((a, b) => b.lines - a.lines);
for (const r of rows) console.log(`${String(r.lines).padStart(4)}  ${r.file}:${r.line}  ${r.name}`);
console.log(`${rows.length} functions over ${limit} lines`);
