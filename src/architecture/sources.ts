/**
 * The source tree as the architecture tests read it: its .ts/.tsx files, each file's relative
 * imports resolved to files of the tree, and each function's length in lines. TypeScript's own
 * parser does the reading (ts.preProcessFile for imports, the AST for functions).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';

/** The repository's root directory. */
export const ROOT = resolve(import.meta.dirname, '../..');

/** Every .ts/.tsx file under `dir` (declaration files and node_modules left out), absolute paths. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return d.name === 'node_modules' ? [] : sourceFiles(p);
    return /\.(ts|tsx)$/.test(d.name) && !d.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Test files and test kits: they may reach across folders to set a scene. */
export function isTestFile(path: string): boolean {
  return /\.(test|e2e)\.tsx?$|\.testkit\.tsx?$/.test(path);
}

/** Relative imports (value and type) of each file, resolved to files of `files`. */
export function importEdges(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const info = ts.preProcessFile(readFileSync(f, 'utf8'), true, true);
    const deps = info.importedFiles
      .map((i) => i.fileName)
      .filter((s) => s.startsWith('.'))
      .map((s) => resolve(dirname(f), s))
      .filter((p) => known.has(p));
    graph.set(f, [...new Set(deps)]);
  }
  return graph;
}

export interface FunctionSpan {
  /** The function's name as written (a variable or property it is assigned to, else '(anonymous)'). */
  name: string;
  /** 1-based line of its first line. */
  line: number;
  /** Lines from its first to its last, both counted. */
  lines: number;
}

function nameOf(node: ts.Node): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name && (ts.isIdentifier(named.name) || ts.isStringLiteral(named.name) || ts.isPrivateIdentifier(named.name))) return named.name.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}

/** Every function of a source text (declarations, expressions, arrows, methods, accessors), nested ones included. */
export function functionSpans(fileName: string, text: string): FunctionSpan[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const out: FunctionSpan[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      out.push({ name: nameOf(node), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Top-level `let` and `var` declarations of a source text: module-level mutable bindings, by name. */
export function topLevelLets(fileName: string, text: string): string[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  return sf.statements.flatMap((st) => {
    if (!ts.isVariableStatement(st) || st.declarationList.flags & ts.NodeFlags.Const) return [];
    return st.declarationList.declarations.map((d) => d.name.getText(sf));
  });
}
