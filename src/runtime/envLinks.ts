/**
 * Env links: what a thread must start before it builds the envs of some families (remote envs'
 * network thread), one entry per family that needs one, keyed by the family's name
 * (core/envs/families.ts). Every place that makes envs from a config awaits ensureEnvLink(envId)
 * first (through runtime/codeEnv's ensureCodeEnvs), so a family's link is wired here once.
 */
import { familyOfEnvId, type EnvFamilyName } from '../core/envs/families.ts';
import { ensureRemoteEnvs } from './openenv/link.ts';

/** Each family's link: started once per thread, awaited before its first env is built. */
const ENV_LINKS: Readonly<Partial<Record<EnvFamilyName, () => Promise<void>>>> = {
  remote: ensureRemoteEnvs,
};

/** Starts this thread's link for `envId`'s family, if it has one (once; later calls await the same start). */
export async function ensureEnvLink(envId: string): Promise<void> {
  const family = familyOfEnvId(envId);
  const link = family ? ENV_LINKS[family.name] : undefined;
  if (link) await link();
}
