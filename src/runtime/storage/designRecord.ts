/** A design record's shape, apart from designs.ts so the database (runStore.ts) declares its table without importing the functions that use it. */

export interface DesignRecord {
  /** Chosen by the saver; saving under the same id replaces the record. */
  id: string;
  /** What `data` is: 'map' is a GridMap (mapSpec.ts); 'code' is a code env, `{ code: string }` (its module's source). */
  kind: 'map' | 'code';
  /** Shown in the list. */
  name: string;
  /** ms since epoch. */
  updatedAt: number;
  data: unknown;
}
