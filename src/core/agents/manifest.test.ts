/** The agents manifest: both model kinds parse, notShipped defaults, and the viewer's lookup fills kwarg defaults. */
import { describe, expect, it } from 'vitest';
import '../envs/index.ts';
import { agentFor, parseAgentManifest, whyNoAgent } from './manifest.ts';

const common = { preset: 'p', seed: 3, iterations: 3, command: 'npm run train -- …', eval: { episodes: 64, greedy: 0.9, sampled: 0.8 }, bytes: 10, sha256: 'a'.repeat(64) };
const kv = { ...common, env: 'tools/kv-lookup', kwargs: { hops: 2 }, file: 'kv-lookup.onnx', config: 'kv-lookup.config.json', model: { kind: 'transformer', vocabSize: 107, dModel: 64, nLayers: 2, nHeads: 4, context: 256, maxActionTokens: 32 } };
const memory = { ...common, env: 'grid/memory', kwargs: { size: 8, viewSize: 5, maxSteps: 12 }, file: 'memory.onnx', config: 'memory.config.json', model: { kind: 'transformer', vocabSize: 108, dModel: 64, nLayers: 2, nHeads: 4, context: 448, maxActionTokens: 2 } };
const grid = { ...common, env: 'grid/empty-5x5', kwargs: {}, file: 'empty-5x5.onnx', config: 'empty-5x5.config.json', model: { kind: 'mlp', obsDim: 984, numActions: 7, viewSize: 7 } };

describe('agents manifest', () => {
  it('parses grid and token agents; notShipped defaults to none', () => {
    const r = parseAgentManifest({ format: 'agentic-rl-playground/agents', version: 1, agents: [kv, grid] });
    expect(r.ok && r.manifest.agents.map((a) => a.model.kind)).toEqual(['transformer', 'mlp']);
    expect(r.ok && r.manifest.notShipped).toEqual([]);
  });

  it('names the field of a bad token model', () => {
    const r = parseAgentManifest({ format: 'agentic-rl-playground/agents', version: 1, agents: [{ ...kv, model: { ...kv.model, context: 0 } }] });
    expect(!r.ok && r.message).toMatch(/agents\.0\.model\.context/);
  });

  it('agentFor fills kwarg defaults: an agent trained with hops 2 (the default) plays the env opened with none, not hops 3', () => {
    const r = parseAgentManifest({ format: 'agentic-rl-playground/agents', version: 1, agents: [kv, grid], notShipped: [{ env: 'grid/memory', reason: 'needs memory' }] });
    if (!r.ok) throw new Error(r.message);
    expect(agentFor(r.manifest, 'tools/kv-lookup', {})?.file).toBe('kv-lookup.onnx');
    expect(agentFor(r.manifest, 'tools/kv-lookup', { hops: 2 })?.file).toBe('kv-lookup.onnx');
    expect(agentFor(r.manifest, 'tools/kv-lookup', { hops: 3 })).toBeNull();
    expect(agentFor(r.manifest, 'grid/empty-5x5', {})?.file).toBe('empty-5x5.onnx');
    expect(whyNoAgent(r.manifest, 'grid/memory')).toBe('needs memory');
    expect(whyNoAgent(r.manifest, 'grid/empty-5x5')).toBeNull();
  });

  it('a grid env can ship a token agent (grid/memory on its text); it plays only the world it was trained in', () => {
    const r = parseAgentManifest({ format: 'agentic-rl-playground/agents', version: 1, agents: [memory, grid] });
    if (!r.ok) throw new Error(r.message);
    expect(agentFor(r.manifest, 'grid/memory', { size: 8, viewSize: 5, maxSteps: 12 })?.model.kind).toBe('transformer');
    // The env's defaults (size 13, view 7) are another world: the viewer offers to reopen with the agent's settings.
    expect(agentFor(r.manifest, 'grid/memory', {})).toBeNull();
    expect(agentFor(r.manifest, 'grid/memory', { size: 8, viewSize: 5 })).toBeNull();
    expect(whyNoAgent(r.manifest, 'grid/memory')).toBeNull();
  });
});
