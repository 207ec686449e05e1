import { MigrationInterface, QueryRunner } from 'typeorm';
import { monotonicFactory } from 'ulid';

/** The entry as it was added, fixed here: the built-ins may change later, this migration does not. */
const NAME = 'guarded';
const SPEC = {
  description: 'A person approves the plan and writes; reads and sandboxed commands run without asking',
  gate: 'supervised',
  allowedTools: ['fs_read_text_file', 'terminal_create'],
  clientMayAllow: ['fs_write_text_file'],
};
const SUBJECT = 'system:migration';

interface Added {
  id: string;
  namespace: string;
  revision: number;
  created_at: Date;
  updated_at: Date;
}

/**
 * The built-in profile `guarded` (docs/plans.md#gates-and-profiles) in every namespace whose built-ins
 * were installed before it existed, as a built-in entry with its change in the namespace's log (the next
 * seq), so that sync clients pull it. A namespace holding an entry of that name, live or deleted, keeps
 * it: nothing is overwritten, and no actor changes (a new namespace's default actor uses `guarded`; an
 * existing one keeps its profile). A namespace whose built-ins are not installed yet gets it with them.
 * `down` removes each entry this added that is unchanged and whose change is still its namespace's last
 * (the log stays without gaps); one built on since is left as it is.
 */
export class GuardedProfile1796589042905 implements MigrationInterface {
  name = 'GuardedProfile1796589042905';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const nextId = monotonicFactory();
    const namespaces = (await queryRunner.query(
      `SELECT s."namespace" FROM "registry_sequences" s
       WHERE NOT EXISTS (SELECT 1 FROM "registry_entries" e
         WHERE e."namespace" = s."namespace" AND e."kind" = 'profile' AND e."name" = $1)
       ORDER BY s."namespace" FOR UPDATE`,
      [NAME],
    )) as { namespace: string }[];
    for (const { namespace } of namespaces) {
      const [added] = (await queryRunner.query(
        `INSERT INTO "registry_entries" ("id", "namespace", "kind", "name", "spec", "labels", "builtin", "created_by", "updated_by")
         VALUES ($1, $2, 'profile', $3, $4::jsonb, '{}'::jsonb, true, $5, $5)
         RETURNING "id", "namespace", "revision", "created_at", "updated_at"`,
        [nextId(), namespace, NAME, JSON.stringify(SPEC), SUBJECT],
      )) as Added[];
      const entity = {
        id: added.id,
        namespace,
        kind: 'profile',
        name: NAME,
        spec: SPEC,
        labels: {},
        revision: added.revision,
        builtin: true,
        createdAt: new Date(added.created_at).toISOString(),
        createdBy: SUBJECT,
        updatedAt: new Date(added.updated_at).toISOString(),
        updatedBy: SUBJECT,
      };
      await queryRunner.query(
        `WITH counted AS (UPDATE "registry_sequences" SET "last_seq" = "last_seq" + 1 WHERE "namespace" = $1 RETURNING "last_seq")
         INSERT INTO "registry_changes" ("namespace", "seq", "kind", "name", "op", "revision", "entity", "actor")
         SELECT $1, "last_seq", 'profile', $2, 'upsert', $3, $4::jsonb, $5 FROM counted`,
        [namespace, NAME, added.revision, JSON.stringify(entity), SUBJECT],
      );
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    const removable = (await queryRunner.query(
      `SELECT e."namespace", e."id" FROM "registry_entries" e
       JOIN "registry_sequences" s ON s."namespace" = e."namespace"
       JOIN "registry_changes" c ON c."namespace" = e."namespace" AND c."seq" = s."last_seq"
       WHERE e."kind" = 'profile' AND e."name" = $1 AND e."builtin" AND e."revision" = 1
         AND e."deleted_at" IS NULL AND e."created_by" = $2
         AND c."kind" = 'profile' AND c."name" = $1 AND c."revision" = 1 AND c."actor" = $2
       ORDER BY e."namespace" FOR UPDATE OF s`,
      [NAME, SUBJECT],
    )) as { namespace: string; id: string }[];
    for (const { namespace, id } of removable) {
      await queryRunner.query(
        `DELETE FROM "registry_changes" WHERE "namespace" = $1
         AND "seq" = (SELECT "last_seq" FROM "registry_sequences" WHERE "namespace" = $1)`,
        [namespace],
      );
      await queryRunner.query(`UPDATE "registry_sequences" SET "last_seq" = "last_seq" - 1 WHERE "namespace" = $1`, [
        namespace,
      ]);
      await queryRunner.query(`DELETE FROM "registry_entries" WHERE "id" = $1`, [id]);
    }
  }
}
