/**
 * The page's side of the shipped agents: the manifest (fetched once, validated) and one agent
 * worker that holds the policy being watched. Loading a policy fetches its ONNX file, checks
 * its size and SHA-256 against the manifest, and hands the bytes to the worker.
 */
import { wrap, transfer, type Remote } from 'comlink';
import { parseAgentManifest, type Agent, type AgentManifest } from '../../core/agents/manifest.ts';
import type { AgentWorkerApi } from '../../runtime/agentWorker/worker.ts';

const MANIFEST_URL = 'agents/manifest.json';

let manifest: Promise<AgentManifest> | null = null;

/** The shipped agents; rejects with a message a person can act on. */
export function loadAgentManifest(): Promise<AgentManifest> {
  manifest ??= (async () => {
    const url = new URL(MANIFEST_URL, document.baseURI);
    const res = await fetch(url);
    if (!res.ok) throw new Error(`could not fetch ${url.pathname} (HTTP ${res.status}): the host is missing public/agents/`);
    const r = parseAgentManifest(await res.json());
    if (!r.ok) throw new Error(r.message);
    return r.manifest;
  })();
  // A failed fetch is not cached: the next visit tries again.
  manifest.catch(() => (manifest = null));
  return manifest;
}

let worker: Remote<AgentWorkerApi> | null = null;
let loaded: string | null = null;

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return Array.from(d, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The worker with `agent`'s policy loaded (fetched and checked on first use). */
export async function agentPolicy(agent: Agent): Promise<Remote<AgentWorkerApi>> {
  worker ??= wrap<AgentWorkerApi>(new Worker(new URL('../../runtime/agentWorker/worker.ts', import.meta.url), { type: 'module', name: 'agent' }));
  if (loaded === agent.file) return worker;
  const url = new URL(`agents/${agent.file}`, document.baseURI);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`could not fetch ${url.pathname} (HTTP ${res.status})`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (bytes.length !== agent.bytes || (crypto.subtle && (await sha256Hex(bytes)) !== agent.sha256)) {
    throw new Error(`${agent.file} is not the file the manifest describes (size or SHA-256 differs): run npm run train-agents again`);
  }
  await worker.load(transfer(bytes, [bytes.buffer]), agent);
  loaded = agent.file;
  return worker;
}
