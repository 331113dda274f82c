/**
 * The env family registry (src/core/envs/families.ts) against the envs and the config schema: every env the playground makes
 * (built-ins, a custom map, code envs of each observation kind) names a registered family whose
 * declared observation and action kinds are what the env really hands out and takes; each family's
 * declared policies are exactly the ones a run config is accepted with; and no product file outside
 * the registry compares family names.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envIds, makeEnv } from '../core/envs/index.ts';
import type { Env } from '../core/envs/types.ts';
import { ENV_FAMILIES, envFamily, familyOf, familyOfEnvId, MODEL_KINDS, modelKindsOf, playOf } from '../core/envs/families.ts';
import { makeCodeEnv } from '../core/envs/code/index.ts';
import { mapFromJson, mapToKwargs } from '../core/envs/grid/mapSpec.ts';
import { parseRunConfig } from '../core/presets/schema.ts';
import { loadCodeEnvs } from '../runtime/codeEnv/index.ts';
import { ensureEnvLink } from '../runtime/envLinks.node.ts';
import { startServeChild, type ChildServer } from '../runtime/openenv/fixtureServers.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const example = (f: string) => readFileSync(join(ROOT, 'examples/envs', f), 'utf8');

// A remote env plays the calculator served by `npm run serve` in a child process (its steps block this thread).
let served: ChildServer;
beforeAll(async () => {
  await loadCodeEnvs();
  await ensureEnvLink('remote/openenv');
  served = await startServeChild('tools/calculator');
}, 30_000);
afterAll(() => served.kill());

/** Every kind of env there is: the listed built-ins, a custom map, and a code env of each observation kind. */
function allEnvs(): { name: string; env: Env }[] {
  const map = mapFromJson(example('four-rooms.json'));
  if (!map.ok) throw new Error(map.messages.join('; '));
  return [
    ...envIds().map((id) => ({ name: id, env: makeEnv(id) })),
    { name: 'grid/custom (four-rooms.json)', env: makeEnv('grid/custom', mapToKwargs(map.map)) },
    ...['empty-room.js', 'cartpole.js', 'guess-number.js'].map((f) => ({ name: `code env ${f}`, env: makeCodeEnv({ code: example(f) }) as Env })),
    { name: 'remote/openenv (tools/calculator over the wire)', env: makeEnv('remote/openenv', { url: served.url }) },
  ];
}

describe('every env maps to a family that describes it', () => {
  it('its observations and actions are of the kinds its family declares', () => {
    const seen = new Set<string>();
    for (const { name, env } of allEnvs()) {
      const f = familyOf(env.spec);
      seen.add(f.name);
      const obs = env.reset({ seed: 0 }).obs as Record<string, unknown>;
      // Read from the env itself, not from the descriptor: a grid view (bytes) or a vector (floats), or text alone.
      const observed = obs.image instanceof Uint8Array || obs.vector instanceof Float32Array ? 'grid' : typeof obs.text === 'string' ? 'text' : 'other';
      expect(observed, name).toBe(f.observation);
      expect(env.spec.actionSpace.kind === 'discrete' ? 'discrete' : env.spec.actionSpace.kind, name).toBe(f.action);
      // The step pools play index actions over StepObs: exactly the discrete families.
      expect(f.stepPool, name).toBe(f.action === 'discrete');
      // A policy's first action, in the family's own action kind, steps the env.
      const a = f.action === 'discrete' ? 0 : 'answer(1)';
      expect(() => env.step(a as never), name).not.toThrow();
    }
    // Both registered families have envs (a family no env names is dead weight).
    expect([...seen].sort()).toEqual(ENV_FAMILIES.map((f) => f.name).sort());
  });

  it("an env id's prefix names the family its built env reports (familyOfEnvId, read before any env is built)", () => {
    for (const id of envIds()) expect(familyOfEnvId(id)?.name, id).toBe(familyOf(makeEnv(id).spec).name);
    expect(familyOfEnvId('remote/openenv')?.name).toBe('remote');
    // A code env's family is what its code declares, not its id.
    expect(familyOfEnvId('code/custom')).toBeNull();
  });

  it('an unknown family is refused by name', () => {
    expect(() => envFamily('lunar')).toThrow(/unknown env family 'lunar' \(registered: grid, tool, remote\)/);
  });
});

describe('each family fits exactly the policies the schema accepts for it', () => {
  // Written out here, apart from the descriptors: grids train an MLP over step rows or a
  // transformer over the grid as text; tool envs only a transformer over tokens.
  const expected: Record<string, string[]> = { grid: ['mlp', 'transformer'], tool: ['transformer'], remote: ['transformer'] };
  const representative: Record<string, { id: string; kwargs?: Record<string, unknown> }> = { grid: { id: 'grid/empty-8x8' }, tool: { id: 'tools/calculator' }, remote: { id: 'remote/openenv', kwargs: { url: 'ws://127.0.0.1:8000' } } };

  it.each(ENV_FAMILIES.map((f) => [f.name, f] as const))('%s', (name, f) => {
    expect(modelKindsOf(f)).toEqual(expected[name]);
    for (const kind of MODEL_KINDS) {
      const r = parseRunConfig({ env: representative[name], model: { kind }, algo: { algo: 'grpo' } });
      const fits = modelKindsOf(f).includes(kind);
      expect(r.ok, `${name} + ${kind}: ${r.ok ? 'accepted' : r.messages.join('; ')}`).toBe(fits);
      if (!r.ok) expect(r.messages).toContain(`model.kind: ${f.modelKindRule} (got '${kind}')`);
      // An MLP trains on step rows, a transformer on token sequences (createTrainer picks the trainer by this).
      if (fits) expect(playOf(f, kind).data).toBe(kind === 'mlp' ? 'steps' : 'tokens');
    }
    // The form lists a family's envs under a policy that fits it.
    expect(modelKindsOf(f)).toContain(f.listedUnder);
  });
});

/** Lines of `text` that compare a family by name (`x.family === …`, `… !== spec.family`). */
function familyCompares(text: string): number[] {
  const re = /\bfamily\s*[!=]==|[!=]==\s*[\w.?]*\bfamily\b(?!\s*\()/;
  return text.split('\n').flatMap((line, i) => (re.test(line) ? [i + 1] : []));
}

/**
 * Lines of `text` that tell families apart another way: by a family's env-id prefix
 * (`id.startsWith('remote/')`, the prefixes ENV_FAMILIES declares) or by switching on a family.
 */
function familyBranches(text: string): number[] {
  const prefixes = ENV_FAMILIES.map((f) => f.idPrefix.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|');
  const re = new RegExp(`startsWith\\(\\s*['"\`](${prefixes})['"\`]\\s*\\)|switch\\s*\\([^)]*\\bfam(ily)?\\s*\\)`);
  return text.split('\n').flatMap((line, i) => (re.test(line) ? [i + 1] : []));
}

function productFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return d.name === 'node_modules' ? [] : productFiles(p);
    return /\.(ts|tsx)$/.test(d.name) && !/\.test\.tsx?$/.test(d.name) && !d.name.endsWith('.d.ts') ? [p] : [];
  });
}

describe('no family is compared by name outside the registry', () => {
  it('finds a planted comparison either way round, and not a descriptor read', () => {
    expect(familyCompares("a\nif (env.spec.family === 'grid') x();\nb")).toEqual([2]);
    expect(familyCompares("if ('tool' !== spec.family) y();")).toEqual([1]);
    expect(familyCompares("const fam = familyOf(spec);\nif (familyOf(spec).view === 'grid') z();\nshape.fam !== base.fam")).toEqual([]);
  });

  it('finds a planted env-id prefix test or switch on a family, and not a code-env id test', () => {
    expect(familyBranches("x\nconst wire = config.env.id.startsWith('remote/');")).toEqual([2]);
    expect(familyBranches('if (id.startsWith("tools/")) y();')).toEqual([1]);
    expect(familyBranches('switch (spec.family) {')).toEqual([1]);
    expect(familyBranches("switch (fam) {\nif (id.startsWith('code/')) z();\nswitch (kind) {")).toEqual([1]);
  });

  it('src has none (product files; the registry and tests excepted)', () => {
    const registry = join(ROOT, 'src/core/envs/families.ts');
    const files = productFiles(join(ROOT, 'src')).filter((f) => f !== registry);
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((f) => familyCompares(readFileSync(f, 'utf8')).map((n) => `${relative(ROOT, f)}:${n}`));
    expect(found).toEqual([]);
    const branches = files.flatMap((f) => familyBranches(readFileSync(f, 'utf8')).map((n) => `${relative(ROOT, f)}:${n}`));
    expect(branches).toEqual([]);
  });
});
