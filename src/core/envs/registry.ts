/**
 * The env registry: id -> factory. Every registered env is run through `checkEnv` in tests.
 * Kwargs are plain JSON so a config file or a URL can name an env and its settings.
 */
import type { Env, EnvSpec } from './types.ts';

export type EnvKwargs = Record<string, unknown>;
export type EnvFactory = (kwargs: EnvKwargs) => Env;

interface Entry {
  id: string;
  factory: EnvFactory;
  defaults: EnvKwargs;
  /** Whether `envIds()` lists it (code envs are made only from their code, never from defaults). */
  listed: boolean;
}

const entries = new Map<string, Entry>();

export function registerEnv(id: string, factory: EnvFactory, defaults: EnvKwargs = {}, options: { listed?: boolean } = {}): void {
  if (entries.has(id)) throw new Error(`env id ${JSON.stringify(id)} is already registered`);
  entries.set(id, { id, factory, defaults, listed: options.listed ?? true });
}

/** Whether `id` is registered (listed or not). */
export function hasEnv(id: string): boolean {
  return entries.has(id);
}

export function makeEnv(id: string, kwargs: EnvKwargs = {}): Env {
  const entry = entries.get(id);
  if (!entry) {
    const known = envIds().join(', ');
    if (id.startsWith('code/')) throw new Error(`env ${JSON.stringify(id)} is a code env: its sandbox is not loaded in this thread (await loadCodeEnvs() from src/runtime/codeEnv first)`);
    throw new Error(`unknown env ${JSON.stringify(id)}; registered envs: ${known}`);
  }
  return entry.factory({ ...entry.defaults, ...kwargs });
}

/** Ids of the listed envs (menus, docs, `serve --all`). */
export function envIds(): string[] {
  return [...entries.values()].filter((e) => e.listed).map((e) => e.id);
}

/** Specs of every registered env, made with default kwargs. */
export function envSpecs(): EnvSpec[] {
  return envIds().map((id) => makeEnv(id).spec);
}
