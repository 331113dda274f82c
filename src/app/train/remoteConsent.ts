/**
 * A run on a remote env sends every reset and step to a server: the page asks before it connects
 * to an address it has not connected to before (a shared link or a lesson cannot make it talk to
 * a server unasked). Approved addresses are remembered in this browser (localStorage), per origin
 * of the address (scheme, host and port).
 */
import { readRemoteKwargs, REMOTE_ENV_ID } from '../../core/envs/remote/index.ts';
import { capNotice } from '../state/sharedSlices.ts';
import type { Notice } from '../storeTypes.ts';

/** localStorage key of the approved server origins (a JSON array of strings). */
export const APPROVED_KEY = 'remote-env-approved-servers';

/** What the consent needs from the page: storage and a yes/no question (window.confirm by default). */
export interface ConsentHost {
  storage: Pick<Storage, 'getItem' | 'setItem'> | null;
  ask: (question: string) => boolean;
}

/** The server addresses a config's envs (and stages' envs) connect to. */
export function remoteAddresses(config: { env: { id: string; kwargs?: Record<string, unknown> }; stages?: readonly { env?: { id: string; kwargs?: Record<string, unknown> } }[] }): string[] {
  const envs = [config.env, ...(config.stages ?? []).map((s) => s.env).filter((e): e is { id: string; kwargs?: Record<string, unknown> } => e !== undefined)];
  const urls = envs.filter((e) => e.id === REMOTE_ENV_ID).map((e) => readRemoteKwargs(e.kwargs ?? {}).url);
  return [...new Set(urls.filter((u) => u !== ''))];
}

/** The part of an address an approval covers: scheme, host and port (`ws://127.0.0.1:8000`). */
export function serverOrigin(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}`;
}

function approved(storage: ConsentHost['storage']): string[] {
  try {
    const v = JSON.parse(storage?.getItem(APPROVED_KEY) ?? '[]') as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * Whether the run may connect: true at once when every address was approved before; otherwise
 * asks once per new address, and remembers a yes. A no (or no way to ask) refuses.
 */
export function consentToConnect(urls: readonly string[], host: ConsentHost): { ok: true } | { ok: false; refused: string } {
  const known = approved(host.storage);
  for (const url of urls) {
    const origin = serverOrigin(url);
    if (known.includes(origin)) continue;
    const yes = host.ask(
      `This run plays its env on a server: ${url}\n\nThis page has not connected to ${origin} before. Every reset and step of training goes to it (the env's text and the policy's actions), and it answers with observations and rewards.\n\nConnect to ${origin}?`,
    );
    if (!yes) return { ok: false, refused: origin };
    known.push(origin);
    try {
      host.storage?.setItem(APPROVED_KEY, JSON.stringify(known));
    } catch {
      // Storage full or off: asked again next time, which is the safe side.
    }
  }
  return { ok: true };
}

/** The warning a refused question leaves (origin: the server's scheme, host and port). */
export function notConnectedNotice(origin: string): string {
  return `Not connected to ${origin}: nothing was started.`;
}

/**
 * The notices (by id) that said a start on one of `urls`' servers was refused: once a start on
 * them is approved they are stale ("nothing was started" beside a run that trains). Notices about
 * other servers, and every other notice, stay.
 */
export function staleRefusals(urls: readonly string[], notices: readonly Pick<Notice, 'id' | 'text'>[]): number[] {
  const said = new Set(urls.map((u) => capNotice(notConnectedNotice(serverOrigin(u)))));
  return notices.filter((n) => said.has(n.text)).map((n) => n.id);
}

/** The page's own host: localStorage and window.confirm (a native dialog: keyboard and screen-reader ready). */
export function pageConsentHost(): ConsentHost {
  let storage: Storage | null;
  try {
    storage = globalThis.localStorage ?? null;
  } catch {
    storage = null;
  }
  return { storage, ask: (q) => (typeof globalThis.confirm === 'function' ? globalThis.confirm(q) : false) };
}
