import { describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getMetadataArgsStorage } from 'typeorm';
import { ENTITIES } from '../../packages/server/src/entities.js';

/*
 * The DataSource maps only the tables some folder declares (its `*.entities.ts`, gathered by
 * src/entities.ts). An entity no folder declares would be missing at run time, and the migration
 * drift check would not notice (TypeORM never drops a table it does not know): this test does.
 */
const SRC = fileURLToPath(new URL('../../packages/server/src', import.meta.url));

function entityFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? entityFiles(join(dir, entry.name))
      : entry.name.endsWith('.entity.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('entities', () => {
  it('every @Entity of src/ is declared by exactly one folder', async () => {
    // TypeORM's metadata storage is global, so it also holds the classes other test files of this worker
    // loaded (each file has its own module registry): only the classes loaded here count.
    const loaded = new Set<unknown>();
    for (const file of entityFiles()) {
      for (const value of Object.values(await import(file))) loaded.add(value);
    }
    const declared = getMetadataArgsStorage()
      .tables.filter((table) => table.type === 'regular' && loaded.has(table.target))
      .map((table) => (table.target as { name: string }).name)
      .sort();
    expect(declared.length).toBeGreaterThan(10);
    expect(ENTITIES.map((entity) => entity.name).sort()).toEqual(declared);
  });
});
