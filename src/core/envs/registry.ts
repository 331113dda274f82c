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
}

const entries = new Map<string, Entry>();

export function registerEnv(id: string, factory: EnvFactory, defaults: EnvKwargs = {}): void {
  if (entries.has(id)) throw new Error(`env id ${JSON.stringify(id)} is already registered`);
  entries.set(id, { id, factory, defaults });
}

export function makeEnv(id: string, kwargs: EnvKwargs = {}): Env {
  const entry = entries.get(id);
  if (!entry) {
    const known = [...entries.keys()].join(', ');
    throw new Error(`unknown env ${JSON.stringify(id)}; registered envs: ${known}`);
  }
  return entry.factory({ ...entry.defaults, ...kwargs });
}

export function envIds(): string[] {
  return [...entries.keys()];
}

/** Specs of every registered env, made with default kwargs. */
export function envSpecs(): EnvSpec[] {
  return envIds().map((id) => makeEnv(id).spec);
}
