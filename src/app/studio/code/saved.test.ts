import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { codeFileName, declaredTitle, readSavedCode, savedName } from './saved.ts';
import { RunStore } from '../../../runtime/storage/runStore.ts';
import { listDesigns, saveDesign } from '../../../runtime/storage/designs.ts';

const cartpole = readFileSync(new URL('../../../../examples/envs/cartpole.js', import.meta.url), 'utf8');
const room = readFileSync(new URL('../../../../examples/envs/empty-room.js', import.meta.url), 'utf8');

describe('saved code envs', () => {
  it('are named by their title and exported under a file name made from it', () => {
    expect(declaredTitle(cartpole)).toBe('CartPole (code)');
    expect(savedName(cartpole, null)).toBe('CartPole (code)');
    expect(savedName('export function step() {}', null)).toBe('Untitled code env');
    expect(savedName(cartpole, 'Checked title')).toBe('Checked title');
    expect(codeFileName('CartPole (code)')).toBe('cartpole.js');
    expect(codeFileName('Empty room 8x8 (code)')).toBe('empty-room-8x8.js');
    expect(codeFileName('!!!')).toBe('env.js');
  });

  it('are listed apart from maps, several at once, and a damaged record is named, not opened', async () => {
    const store = new RunStore('code-designs-test', { indexedDB: new IDBFactory(), IDBKeyRange });
    await saveDesign(store, { id: 'm', kind: 'map', name: 'A map', updatedAt: 1, data: { rows: ['#'] } });
    await saveDesign(store, { id: 'c1', kind: 'code', name: 'CartPole (code)', updatedAt: 2, data: { code: cartpole } });
    await saveDesign(store, { id: 'c2', kind: 'code', name: 'Empty room 8x8 (code)', updatedAt: 3, data: { code: room } });
    const code = await listDesigns(store, 'code');
    expect(code.map((d) => d.id)).toEqual(['c2', 'c1']);
    expect(readSavedCode(code[1].data)).toEqual({ code: cartpole });
    expect((await listDesigns(store, 'map')).map((d) => d.id)).toEqual(['m']);
    expect(readSavedCode({ rows: [] })).toEqual({ problem: 'it holds no module source' });
    expect(readSavedCode({ code: 'x'.repeat(70_000) })).toHaveProperty('problem');
  });
});
