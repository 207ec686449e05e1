import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { AppConfig } from '../../packages/server/src/config/app.config.js';
import { DataDirLock } from '../../packages/server/src/database/data-dir.lock.js';
import { createDataSource, EMBEDDED_PGDATA } from '../../packages/server/src/database/data-source.factory.js';
import { DataDirLockedError } from '../../packages/server/src/database/database.errors.js';
import { openDatabase, pendingMigrations } from '../../packages/server/src/database/database.startup.js';
import { openEmbedded } from '../../packages/server/src/database/embedded-opening.js';
import {
  readManifest,
  schemaDigest,
  seedFromTemplate,
  writeManifest,
} from '../../packages/server/src/database/embedded-template.js';
import { writeEmbeddedTemplate } from '../../packages/server/src/database/embedded-template.writer.js';
import { ENTITIES } from '../../packages/server/src/entities.js';
import { createEmbeddedTestDatabase, TEST_DEFAULTS } from '../support/database.js';

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined };

/** Everything the migrations leave in a database: their own record, the schema's objects, and any rows. */
async function fingerprint(dataSource: DataSource): Promise<Record<string, unknown>> {
  const q = (sql: string) => dataSource.query<unknown[]>(sql);
  const tables = await dataSource.query<{ table_name: string }[]>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
  );
  const rows: Record<string, unknown> = {};
  for (const { table_name } of tables) {
    rows[table_name] = table_name === 'migrations' ? undefined : await q(`SELECT * FROM "${table_name}" ORDER BY 1`);
  }
  return {
    migrations: await q('SELECT id, timestamp, name FROM migrations ORDER BY id'),
    columns: await q(`SELECT table_name, column_name, ordinal_position, data_type, udt_name, is_nullable,
        column_default, character_maximum_length FROM information_schema.columns
      WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`),
    indexes: await q(`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'
      ORDER BY tablename, indexname`),
    constraints: await q(`SELECT c.conrelid::regclass::text AS on_table, c.conname, pg_get_constraintdef(c.oid) AS def
      FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public'
      ORDER BY on_table, c.conname`),
    triggers: await q(`SELECT tgrelid::regclass::text AS on_table, tgname, pg_get_triggerdef(t.oid) AS def
      FROM pg_trigger t WHERE NOT tgisinternal ORDER BY on_table, tgname`),
    functions: await q(`SELECT p.proname, pg_get_functiondef(p.oid) AS def FROM pg_proc p
      JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY p.proname`),
    types: await q(`SELECT t.typname, t.typtype FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname = 'public' ORDER BY t.typname`),
    extensions: await q('SELECT extname FROM pg_extension ORDER BY extname'),
    rows,
  };
}

describe('the embedded template (a migrated data directory a fresh one starts from)', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  const scratch = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), `cleveragents-${prefix}-`));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  // One template for the file, written by the build step's own function into a scratch folder.
  let tpl: string;
  let tplRoot: string;
  beforeAll(async () => {
    tplRoot = mkdtempSync(join(tmpdir(), 'cleveragents-template-'));
    tpl = join(tplRoot, 'embedded-template');
    expect(await writeEmbeddedTemplate(tpl)).toBe('written');
  });
  afterAll(() => rmSync(tplRoot, { recursive: true, force: true }));

  /** A fresh data directory's config: no PGlite folder in it yet. */
  function freshDataDir() {
    const dataDir = scratch('data');
    return { dataDir, config: AppConfig.fromEnv({ ...TEST_DEFAULTS, CLEVERAGENTS_DATA_DIR: dataDir }) };
  }

  it('gives a fresh data directory exactly the database the migrations make', async () => {
    expect(readManifest(tpl)).toEqual(schemaDigest());
    // Kept, not rebuilt, while it holds today's schema.
    expect(await writeEmbeddedTemplate(tpl)).toBe('kept');

    const migrated = await createEmbeddedTestDatabase({ migrated: false });
    cleanup.push(() => migrated.cleanup());
    const byMigrations = await openDatabase(migrated.config(), silent, { entities: ENTITIES });
    let expected: Record<string, unknown>;
    try {
      expected = await fingerprint(byMigrations);
    } finally {
      await byMigrations.destroy();
    }
    expect((expected.migrations as unknown[]).length).toBe(schemaDigest().migrations.length);

    const { dataDir, config } = freshDataDir();
    expect(seedFromTemplate(join(dataDir, EMBEDDED_PGDATA), tpl)).toBe(true);
    const seeded = await createDataSource(config, { entities: ENTITIES });
    try {
      await seeded.initialize();
      expect(await pendingMigrations(seeded)).toEqual([]);
      expect(await fingerprint(seeded)).toEqual(expected);
    } finally {
      await seeded.destroy();
    }
  });

  it('is never used for another schema, nor over an existing database', () => {
    const { dataDir } = freshDataDir();
    const pgdata = join(dataDir, EMBEDDED_PGDATA);
    // A template made before the newest migration landed: its manifest names one migration fewer.
    const today = schemaDigest();
    // What a start killed while copying leaves behind is cleared by the next seeding.
    mkdirSync(`${pgdata}.seeding`);
    writeFileSync(join(`${pgdata}.seeding`, 'PG_VERSION'), 'half a copy');
    writeManifest(tpl, { ...today, digest: 'f'.repeat(64), migrations: today.migrations.slice(0, -1) });
    try {
      expect(seedFromTemplate(pgdata, tpl)).toBe(false);
      expect(existsSync(pgdata)).toBe(false);
    } finally {
      writeManifest(tpl, today);
    }

    expect(seedFromTemplate(pgdata, tpl)).toBe(true);
    expect(readFileSync(join(pgdata, 'PG_VERSION'), 'utf8')).toBe(
      readFileSync(join(tpl, 'pglite', 'PG_VERSION'), 'utf8'),
    );
    const before = readdirSync(pgdata).sort();
    // A directory that already has a database keeps it.
    expect(seedFromTemplate(pgdata, tpl)).toBe(false);
    expect(readdirSync(pgdata).sort()).toEqual(before);
    expect(readdirSync(dataDir).filter((name) => name.includes('.seeding'))).toEqual([]);
  });

  it('seeds only under the data directory lock', () => {
    const { dataDir } = freshDataDir();
    const holder = DataDirLock.acquire(dataDir, 'another server');
    try {
      expect(() => openEmbedded(dataDir, 'second', tpl)).toThrow(DataDirLockedError);
      expect(existsSync(join(dataDir, EMBEDDED_PGDATA))).toBe(false);
    } finally {
      holder.release();
    }
  });

  it('leaves a seeded directory of an older schema to the migrations, as any other', async () => {
    const { dataDir, config } = freshDataDir();
    const opening = openEmbedded(dataDir, 'test', tpl);
    await (await opening.pglite).close();
    opening.lock.release();
    const older = await createDataSource(config, { entities: ENTITIES });
    try {
      await older.initialize();
      await older.undoLastMigration({ transaction: 'all' });
      expect(await pendingMigrations(older)).toHaveLength(1);
    } finally {
      await older.destroy();
    }
    const reopened = await openDatabase(config, silent, { entities: ENTITIES });
    try {
      expect(await pendingMigrations(reopened)).toEqual([]);
    } finally {
      await reopened.destroy();
    }
  });
});
