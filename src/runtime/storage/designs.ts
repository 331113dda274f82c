/**
 * Envs a person made in the studio, saved in the runs database (table `designs`) so they sit
 * beside the runs trained on them. A record holds the design as data (a map's file form); it is
 * parsed again on every load, so a record written by an older version is checked, not trusted.
 */
import type { RunStore } from './runStore.ts';
import type { DesignRecord } from './designRecord.ts';

export type { DesignRecord } from './designRecord.ts';


/** Saves (or replaces) a design. */
export async function saveDesign(store: RunStore, rec: DesignRecord): Promise<void> {
  await store.db.designs.put(rec);
}

/** Every saved design of `kind`, newest first. */
export async function listDesigns(store: RunStore, kind: DesignRecord['kind']): Promise<DesignRecord[]> {
  const all = await store.db.designs.orderBy('updatedAt').reverse().toArray();
  return all.filter((d) => d.kind === kind);
}

export async function deleteDesign(store: RunStore, id: string): Promise<void> {
  await store.db.designs.delete(id);
}

/** A fresh design id: time-ordered, unique within a page. */
export function newDesignId(now = Date.now()): string {
  return `d-${now.toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
