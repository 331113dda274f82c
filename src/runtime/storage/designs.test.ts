import { describe, expect, it } from 'vitest';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { RunStore } from './runStore.ts';
import { deleteDesign, listDesigns, saveDesign } from './designs.ts';

describe('saved designs', () => {
  it('saves, replaces, lists newest first and deletes, beside runs', async () => {
    const store = new RunStore('designs-test', { indexedDB: new IDBFactory(), IDBKeyRange });
    await saveDesign(store, { id: 'a', kind: 'map', name: 'A', updatedAt: 1, data: { rows: ['#'] } });
    await saveDesign(store, { id: 'b', kind: 'map', name: 'B', updatedAt: 2, data: {} });
    await saveDesign(store, { id: 'a', kind: 'map', name: 'A2', updatedAt: 3, data: {} });
    expect((await listDesigns(store, 'map')).map((d) => d.name)).toEqual(['A2', 'B']);
    await deleteDesign(store, 'b');
    expect((await listDesigns(store, 'map')).map((d) => d.id)).toEqual(['a']);
    expect(await store.db.runs.count()).toBe(0);
  });
});
