import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { openDatabase } from '../../packages/server/src/database/database.startup.js';
import { ENTITIES } from '../../packages/server/src/entities.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The GuardedProfile migration on namespaces made before it: the built-in `guarded` profile is added, with
 * its change at the next seq of the namespace's log, where no entry (live or deleted) has its name; a
 * user's entry of that name is left as it is, and so is a namespace whose built-ins are not installed
 * yet. `down` takes back what is still the namespace's last change, and leaves what was built on.
 */

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined };
const MIGRATION = 'GuardedProfile1796589042905';
const NAMESPACES = ['plain', 'mine', 'gone', 'later', 'fresh'];

describe.each(databaseTargets())('the GuardedProfile migration on $kind', (target) => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await target.create();
    dataSource = await openDatabase(db.config({ CLEVERAGENTS_MIGRATE_ON_START: 'true' }), silent, {
      entities: ENTITIES,
    });
  }, 60000);

  afterAll(async () => {
    await ifAssigned(dataSource)?.destroy();
    await ifAssigned(db)?.cleanup();
  });

  /** Each namespace's `guarded` profile (spec, builtin, revision, live), last seq and changes of it. */
  async function state(): Promise<Record<string, unknown>> {
    const result: Record<string, unknown> = {};
    for (const ns of NAMESPACES) {
      const entries: { spec: unknown; builtin: boolean; revision: number; deleted: boolean; created_by: string }[] =
        await dataSource.query(
          `SELECT spec, builtin, revision, deleted_at IS NOT NULL AS deleted, created_by FROM registry_entries
           WHERE namespace = $1 AND kind = 'profile' AND name = 'guarded'`,
          [ns],
        );
      const seq: { last_seq: string }[] = await dataSource.query(
        'SELECT last_seq FROM registry_sequences WHERE namespace = $1',
        [ns],
      );
      const changes: { seq: string; op: string; entity: Record<string, unknown> | null }[] = await dataSource.query(
        `SELECT seq, op, entity FROM registry_changes WHERE namespace = $1 AND name = 'guarded' ORDER BY seq`,
        [ns],
      );
      result[ns] = {
        entry: entries[0] ?? null,
        lastSeq: seq[0] ? Number(seq[0].last_seq) : null,
        changes: changes.map((c) => ({
          seq: Number(c.seq),
          op: c.op,
          entity: c.entity && { name: c.entity.name, builtin: c.entity.builtin, spec: c.entity.spec },
        })),
      };
    }
    return result;
  }

  /** Reverts the migrations newer than this one, then this one (later migrations come down first). */
  async function undoThroughMigration(): Promise<void> {
    const index = dataSource.migrations.findIndex((migration) => migration.name === MIGRATION);
    expect(index).toBeGreaterThanOrEqual(0);
    for (let i = dataSource.migrations.length - 1; i >= index; i--) {
      await dataSource.undoLastMigration({ transaction: 'all' });
    }
  }

  it('adds guarded only where no entry has its name, in the change log; down takes back only its last change', async () => {
    await undoThroughMigration();
    // Namespaces as the built-ins of before left them: their log at seq 4.
    for (const ns of NAMESPACES) {
      await dataSource.query(`INSERT INTO namespaces (slug, display_name, created_by) VALUES ($1, $1, 'test')`, [ns]);
      if (ns !== 'fresh') {
        await dataSource.query('INSERT INTO registry_sequences (namespace, last_seq) VALUES ($1, 4)', [ns]);
      }
    }
    const mine = { description: "the user's own", gate: 'manual' };
    await dataSource.query(
      `INSERT INTO registry_entries (id, namespace, kind, name, spec, labels, builtin, created_by, updated_by)
       VALUES ('01MINE', 'mine', 'profile', 'guarded', $1::jsonb, '{}', false, 'alice', 'alice')`,
      [JSON.stringify(mine)],
    );
    await dataSource.query(
      `INSERT INTO registry_entries (id, namespace, kind, name, spec, labels, builtin, revision, created_by, updated_by, deleted_at)
       VALUES ('01GONE', 'gone', 'profile', 'guarded', NULL, '{}', false, 2, 'alice', 'alice', now())`,
    );
    const before = await state();

    await dataSource.runMigrations({ transaction: 'all' });
    const spec = {
      description: 'A person approves the plan and writes; reads and sandboxed commands run without asking',
      gate: 'supervised',
      allowedTools: ['fs_read_text_file', 'terminal_create'],
      clientMayAllow: ['fs_write_text_file'],
    };
    const added = {
      entry: { spec, builtin: true, revision: 1, deleted: false, created_by: 'system:migration' },
      lastSeq: 5,
      changes: [{ seq: 5, op: 'upsert', entity: { name: 'guarded', builtin: true, spec } }],
    };
    expect(await state()).toEqual({
      plain: added,
      mine: {
        entry: { spec: mine, builtin: false, revision: 1, deleted: false, created_by: 'alice' },
        lastSeq: 4,
        changes: [],
      },
      gone: {
        entry: { spec: null, builtin: false, revision: 2, deleted: true, created_by: 'alice' },
        lastSeq: 4,
        changes: [],
      },
      later: added,
      fresh: { entry: null, lastSeq: null, changes: [] },
    });

    // In `later`, a change after it: down leaves that namespace's guarded as it is.
    await dataSource.query(`UPDATE registry_sequences SET last_seq = 6 WHERE namespace = 'later'`);
    await dataSource.query(
      `INSERT INTO registry_changes (namespace, seq, kind, name, op, revision, entity, actor)
       VALUES ('later', 6, 'skill', 'review', 'delete', 2, NULL, 'alice')`,
    );
    await undoThroughMigration();
    expect(await state()).toEqual({ ...before, later: { ...added, lastSeq: 6 } });
    await dataSource.runMigrations({ transaction: 'all' });
  }, 60000);
});
