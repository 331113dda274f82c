/**
 * The pretrained agents shipped in public/agents/: one ONNX policy per environment, and a
 * manifest saying how each was made (the exact command, config and seed, so anyone can make it
 * again with `npm run train-agents`) and how well it plays (held-out success, measured by the run
 * that made it). The Environments view reads the manifest to offer "Watch a trained agent".
 */
import { z } from 'zod';
import { kwargDocs } from '../envs/kwargDocs.ts';

const evalSchema = z.strictObject({
  /** Held-out seeds played (2,000,000,000 + i; never seen in training). */
  episodes: z.int().min(1),
  /** Success rate with the most likely action at every step. */
  greedy: z.number().min(0).max(1),
  /** Success rate sampling from the policy (how it was trained to act). */
  sampled: z.number().min(0).max(1),
});

export const agentSchema = z.strictObject({
  /** Registered env id the agent plays. */
  env: z.string().min(1),
  /** Env kwargs it was trained with (the viewer must use the same to watch it; it offers to reopen the env with them). */
  kwargs: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])),
  /** ONNX file, relative to the manifest. */
  file: z.string().regex(/^[a-z0-9][a-z0-9._-]*\.onnx$/, 'a plain file name ending in .onnx'),
  /** Run config file it was trained from, relative to the manifest. */
  config: z.string().regex(/^[a-z0-9][a-z0-9._-]*\.json$/, 'a plain file name ending in .json'),
  /** Preset the config started from. */
  preset: z.string(),
  seed: z.int().min(0),
  iterations: z.int().min(1),
  /** The command that trained it, from the repository root. */
  command: z.string(),
  /**
   * The policy's input and output. 'mlp': the MLP over the egocentric grid view (obs [1, obsDim]
   * → logprobs [1, numActions]). 'transformer': a token policy for a tool env, or for a grid env
   * played as text (grid/memory: envs/grid/textAdapter.ts, one letter per step, so the viewer
   * maps its letters back to grid actions), exported as its KV-cache decode graph, batch 1, one token per call (tokens [1, 1], pos [1], past.k.l /
   * past.v.l [1, nHeads, context, dModel / nHeads] → logprobs [1, 1, vocabSize], present.k.l /
   * present.v.l), so the page can rebuild the empty cache from these numbers.
   */
  model: z.discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('mlp'),
      obsDim: z.int().min(1),
      numActions: z.int().min(1),
      viewSize: z.int().min(1),
    }),
    z.strictObject({
      kind: z.literal('transformer'),
      vocabSize: z.int().min(1),
      dModel: z.int().min(1),
      nLayers: z.int().min(1),
      nHeads: z.int().min(1),
      /** Longest context in tokens (the KV cache's length). */
      context: z.int().min(1),
      /** Most tokens in one action, <eoa> included (as in training). */
      maxActionTokens: z.int().min(1),
    }),
  ]),
  eval: evalSchema,
  /** File size and SHA-256 of the ONNX file (hex), checked by the tests. */
  bytes: z.int().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

export const manifestSchema = z.strictObject({
  format: z.literal('agentic-rl-playground/agents'),
  version: z.literal(1),
  agents: z.array(agentSchema),
  /** Envs that ship no agent on purpose, and why (the viewer says so instead of showing a poor one). */
  notShipped: z.array(z.strictObject({ env: z.string().min(1), reason: z.string().min(1) })).default([]),
});

export type Agent = z.infer<typeof agentSchema>;
export type MlpAgent = Agent & { model: { kind: 'mlp' } };
export type TokenAgent = Agent & { model: { kind: 'transformer' } };
export type AgentManifest = z.infer<typeof manifestSchema>;

/** Validates a fetched or read manifest; the error names the field. */
export function parseAgentManifest(input: unknown): { ok: true; manifest: AgentManifest } | { ok: false; message: string } {
  const r = manifestSchema.safeParse(input);
  if (r.success) return { ok: true, manifest: r.data };
  const issue = r.error.issues[0];
  return { ok: false, message: `agents manifest: ${issue.path.join('.') || '(root)'}: ${issue.message}` };
}

/** Same kwargs (the viewer's overrides vs the agent's): the agent only sees the world it learned. */
export function sameKwargs(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

/** Why no agent ships for `env`, when the manifest says. */
export function whyNoAgent(manifest: AgentManifest, env: string): string | null {
  return manifest.notShipped.find((n) => n.env === env)?.reason ?? null;
}

/** `kwargs` with every kwarg the env reads filled in at its default (an unknown env: as given). */
function withDefaults(env: string, kwargs: Readonly<Record<string, unknown>>): Record<string, unknown> {
  let docs: { name: string; default: unknown }[] = [];
  try {
    docs = kwargDocs(env);
  } catch {
    // Not registered here: compare the kwargs as written.
  }
  return { ...Object.fromEntries(docs.map((d) => [d.name, d.default])), ...kwargs };
}

/**
 * The agent for an env as the viewer has it open, or null. Kwargs are compared with defaults
 * filled in, so an agent trained with `{ hops: 2 }` (kv-lookup's default) plays the env opened
 * with none.
 */
export function agentFor(manifest: AgentManifest, env: string, kwargs: Readonly<Record<string, unknown>>): Agent | null {
  const want = withDefaults(env, kwargs);
  return manifest.agents.find((a) => a.env === env && sameKwargs(withDefaults(env, a.kwargs), want)) ?? null;
}
