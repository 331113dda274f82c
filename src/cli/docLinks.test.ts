/**
 * Every relative link in README.md, ARCHITECTURE.md and docs/ resolves: the file (or folder)
 * exists, and a `#anchor` into a Markdown file names one of its headings, slugged as GitHub
 * slugs them (lower case, punctuation dropped, spaces to hyphens, repeats numbered -1, -2, …).
 * Links inside code (fenced blocks, `spans`) and to other sites are not checked.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

/** GitHub's anchor for a heading's text. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/** Text outside fenced code blocks and inline code spans, line structure kept. */
function prose(md: string): string {
  let fenced = false;
  return md
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line.replace(/`[^`]*`/g, '');
    })
    .join('\n');
}

/** The anchors a Markdown file's headings give (headings inside fenced code are not headings). */
export function anchorsOf(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of md.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Each relative link of `md` (a file at `path`) that does not resolve, with the reason. */
export function brokenLinks(path: string, md: string, read: (p: string) => string | null, isPath: (p: string) => boolean): string[] {
  const problems: string[] = [];
  for (const [, target] of prose(md).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [file, anchor] = target.split('#', 2);
    const resolved = file === '' ? path : normalize(join(dirname(path), decodeURIComponent(file)));
    if (!isPath(resolved)) {
      problems.push(`${path}: ${target}: no such file ${resolved}`);
      continue;
    }
    if (anchor === undefined || !resolved.endsWith('.md')) continue;
    const text = read(resolved);
    if (text !== null && !anchorsOf(text).has(decodeURIComponent(anchor))) problems.push(`${path}: ${target}: ${resolved} has no heading #${anchor}`);
  }
  return problems;
}

function docFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => {
      const p = join(dir, f);
      return statSync(p).isDirectory() ? walk(p) : p.endsWith('.md') ? [p] : [];
    });
  return ['README.md', 'ARCHITECTURE.md', ...walk('docs')];
}

describe('links in README.md, ARCHITECTURE.md and docs/', () => {
  it('every relative link resolves to a file, and every anchor to a heading', () => {
    const read = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8') : null);
    const files = docFiles();
    expect(files.length).toBeGreaterThan(10);
    const problems = files.flatMap((f) => brokenLinks(f, readFileSync(f, 'utf8'), read, existsSync));
    expect(problems).toEqual([]);
  });

  it('slugs headings as GitHub does (hand-worked)', () => {
    expect(slug("Potential shaping: what Φ is, and how an episode's end is scored")).toBe('potential-shaping-what-φ-is-and-how-an-episodes-end-is-scored');
    expect(slug('Sweeps and the statistics a reviewer expects (npm run sweep)')).toBe('sweeps-and-the-statistics-a-reviewer-expects-npm-run-sweep');
    expect([...anchorsOf('# A\n## Notes\n```\n# not a heading\n```\n## Notes\n### `code` here')]).toEqual(['a', 'notes', 'notes-1', 'code-here']);
  });

  it('catches a missing file, a missing anchor and a wrong relative base', () => {
    const files: Record<string, string> = { 'docs/a.md': '# Alpha\n## Beta', 'README.md': '# Top' };
    const read = (p: string) => files[p] ?? null;
    const isPath = (p: string) => p in files || p === 'docs';
    const md = '[ok](a.md#beta) [gone](b.md) [anchor](a.md#gamma) [base](docs/a.md) [up](../README.md#top) [self](#alpha) [web](https://x.org/y) `[code](nowhere.md)`';
    expect(brokenLinks('docs/a.md', md, read, isPath)).toEqual([
      'docs/a.md: b.md: no such file docs/b.md',
      'docs/a.md: a.md#gamma: docs/a.md has no heading #gamma',
      'docs/a.md: docs/a.md: no such file docs/docs/a.md',
    ]);
  });
});
