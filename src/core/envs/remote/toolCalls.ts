/**
 * MCP tools as the tool-call actions the token policies write: `name(arg, arg)`. A tool's
 * arguments are matched to its input schema's properties in their declared order; each argument
 * is read as JSON where it parses (numbers, quoted strings, true/false) and as bare text otherwise.
 */
import type { RemoteTool } from './session.ts';

/** The tool's argument names, in its schema's order. */
export function argumentNames(tool: RemoteTool): string[] {
  const props = tool.inputSchema.properties;
  return typeof props === 'object' && props !== null ? Object.keys(props) : [];
}

/** How the task text lists a tool: `name(arg, arg)`. */
export function toolSignature(tool: RemoteTool): string {
  return `${tool.name}(${argumentNames(tool).join(', ')})`;
}

/** Splits `a, (b, c), "d,e"` at its top-level commas. */
function splitArgs(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let cur = '';
  for (const ch of s) {
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth--;
    else if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
      continue;
    }
    cur += ch;
  }
  if (cur.trim() !== '' || out.length > 0) out.push(cur.trim());
  return out;
}

function argValue(s: string): unknown {
  if (/^'.*'$/s.test(s)) return s.slice(1, -1);
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

export type ParsedCall = { ok: true; tool: RemoteTool; args: unknown[] } | { ok: false; error: string };

/** Reads `name(args)`; says what is wrong (no call shape, unknown tool, too many arguments). */
export function parseToolCall(text: string, tools: readonly RemoteTool[]): ParsedCall {
  const m = /^\s*([A-Za-z_][\w.-]*)\s*\((.*)\)\s*$/s.exec(text);
  const list = tools.map(toolSignature).join(', ');
  if (!m) return { ok: false, error: `write one call, name(args); tools: ${list}` };
  const tool = tools.find((t) => t.name === m[1]);
  if (!tool) return { ok: false, error: `no tool ${m[1]}; tools: ${list}` };
  const args = splitArgs(m[2]).map(argValue);
  const names = argumentNames(tool);
  if (args.length > names.length) return { ok: false, error: `${tool.name} takes ${names.length} argument${names.length === 1 ? '' : 's'} (${names.join(', ')}), got ${args.length}` };
  return { ok: true, tool, args };
}

/** The `arguments` object of a call: positional values under the schema's names. */
export function argumentsFor(tool: RemoteTool, args: readonly unknown[]): Record<string, unknown> {
  const names = argumentNames(tool);
  const out: Record<string, unknown> = {};
  args.forEach((v, i) => (out[names[i]] = v));
  return out;
}
