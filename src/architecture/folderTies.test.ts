/**
 * No two folders of the app, the runtime, the server or the CLI import each other (a two-way
 * tie): when each depends on the other neither can be read, tested or moved alone, and a hub
 * grows. The folders are the first level under src/app and src/runtime, plus src/server and
 * src/cli. Files directly in src/app are the composition root (App.tsx, main.tsx, the composed
 * store and its type, the hash sync): they import every view and views read the store through
 * them, so they are no folder and are left out. Test files may reach across to set a scene.
 * src/core's rooms (its first-level folders: algos, engine, models, rollout, update, ...) are
 * checked by a test of their own below, since a file cycle check (imports.test.ts) lets two rooms
 * lean on each other through different files.
 */
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importEdges, isTestFile, ROOT, sourceFiles } from './sources.ts';

/** The folder a repository-relative path belongs to, or null when it is in none checked here. */
export function folderOf(rel: string): string | null {
  const parts = rel.split('/');
  if (parts[0] !== 'src') return null;
  if (parts[1] === 'server' || parts[1] === 'cli') return `src/${parts[1]}`;
  if ((parts[1] === 'app' || parts[1] === 'runtime') && parts.length > 3) return parts.slice(0, 3).join('/');
  return null;
}

/** The room of src/core a repository-relative path belongs to (its first-level folder), or null. */
export function coreRoomOf(rel: string): string | null {
  const parts = rel.split('/');
  return parts[0] === 'src' && parts[1] === 'core' && parts.length > 3 ? parts.slice(0, 3).join('/') : null;
}

/** Pairs of folders with imports both ways, each with one import that makes each way. */
export function twoWayTies(edges: ReadonlyMap<string, readonly string[]>, folder: (f: string) => string | null): string[] {
  const way = new Map<string, string>();
  for (const [from, tos] of edges) {
    const a = folder(from);
    if (a === null) continue;
    for (const to of tos) {
      const b = folder(to);
      if (b !== null && b !== a && !way.has(`${a} -> ${b}`)) way.set(`${a} -> ${b}`, `${from} -> ${to}`);
    }
  }
  const ties: string[] = [];
  for (const [key, example] of way) {
    const [a, b] = key.split(' -> ');
    const back = way.get(`${b} -> ${a}`);
    if (back && a < b) ties.push(`${a} <-> ${b} (${example}; ${back})`);
  }
  return ties.sort();
}

describe('folder ties', () => {
  it('finds a planted two-way tie and accepts one-way imports and in-folder cycles', () => {
    const top = (f: string) => f.split('/')[0];
    expect(twoWayTies(new Map([['a/x', ['b/y']], ['b/y', ['c/z']], ['c/z', []]]), top)).toEqual([]);
    expect(twoWayTies(new Map([['a/x', ['a/y']], ['a/y', ['a/x']]]), top)).toEqual([]);
    expect(twoWayTies(new Map([['a/x', ['b/y']], ['b/z', ['a/w']]]), top)).toEqual(['a <-> b (a/x -> b/y; b/z -> a/w)']);
  });

  it('names folders by their first level under src/app and src/runtime, and leaves the app root out', () => {
    expect(folderOf('src/app/train/run.ts')).toBe('src/app/train');
    expect(folderOf('src/app/studio/code/link.ts')).toBe('src/app/studio');
    expect(folderOf('src/app/store.ts')).toBeNull();
    expect(folderOf('src/runtime/trainWorker/worker.ts')).toBe('src/runtime/trainWorker');
    expect(folderOf('src/server/ws/x.ts')).toBe('src/server');
    expect(folderOf('src/core/algos/gae.ts')).toBeNull();
    expect(coreRoomOf('src/core/algos/registry/index.ts')).toBe('src/core/algos');
    expect(coreRoomOf('src/core/engine/types.ts')).toBe('src/core/engine');
    expect(coreRoomOf('src/core/index.ts')).toBeNull();
    expect(coreRoomOf('src/app/train/run.ts')).toBeNull();
  });

  it('has no two-way tie between folders of src/app, src/runtime, src/server and src/cli', () => {
    const files = sourceFiles(`${ROOT}/src`).filter((f) => !isTestFile(f));
    const edges = importEdges(files);
    expect(twoWayTies(edges, (f) => folderOf(relative(ROOT, f)))).toEqual([]);
  });

  it('has no two-way tie between the rooms of src/core', () => {
    const files = sourceFiles(`${ROOT}/src`).filter((f) => !isTestFile(f));
    expect(twoWayTies(importEdges(files), (f) => coreRoomOf(relative(ROOT, f)))).toEqual([]);
  });
});
