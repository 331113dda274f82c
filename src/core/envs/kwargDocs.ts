/**
 * The kwargs every registered env accepts, read off the envs themselves: while `kwargDocs`
 * builds an env, each kwarg reader reports the name, default and range it checks, so the
 * table in docs/envs.md and `npm run train -- --help` cannot drift from the code.
 */
import { envIds, makeEnv } from './registry.ts';

export interface KwargDoc {
  name: string;
  /** The value used when the kwarg is not given (with every other kwarg at its default). */
  default: unknown;
  /** Accepted values, e.g. '4..64', 'odd, 3..15', '[0, 5]', 'true/false'. */
  range: string;
}

let sink: KwargDoc[] | null = null;

/** Called by the kwarg readers for every kwarg they check. */
export function documentKwarg(doc: KwargDoc): void {
  if (sink && !sink.some((d) => d.name === doc.name)) sink.push(doc);
}

/** The kwargs of env `id`, in the order the env reads them. */
export function kwargDocs(id: string): KwargDoc[] {
  sink = [];
  try {
    makeEnv(id, {});
    return sink;
  } finally {
    sink = null;
  }
}

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** One markdown table of every registered env's kwargs. */
export function envKwargsMarkdown(): string {
  const rows = envIds().flatMap((id) => kwargDocs(id).map((d) => `| \`${id}\` | \`${d.name}\` | ${show(d.default)} | ${d.range} |`));
  return ['| env | kwarg | default | accepted |', '|---|---|---|---|', ...rows].join('\n');
}

/** The same as plain text, one env per line (for --help). */
export function envKwargsText(): string {
  return envIds()
    .map((id) => `  ${id}: ${kwargDocs(id).map((d) => `${d.name}=${show(d.default)} (${d.range})`).join(', ') || '(none)'}`)
    .join('\n');
}
