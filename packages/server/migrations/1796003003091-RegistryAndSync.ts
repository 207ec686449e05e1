import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Registry and sync (docs/protocol.md §6.2, §6.3): registry entries (unique by namespace, kind and name;
 * tombstones kept so that a name used again counts its revisions on), the per-namespace change log
 * (gap-free seq per namespace) and its counter row. All three go with their namespace. The built-in
 * definitions of namespaces that already exist are installed by the server's bootstrap, not here.
 * `down` drops the three tables and what they hold.
 */
export class RegistryAndSync1796003003091 implements MigrationInterface {
  name = 'RegistryAndSync1796003003091';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "registry_entries" ("revision" integer NOT NULL DEFAULT '1', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "created_by" text NOT NULL, "id" text COLLATE "C" NOT NULL, "namespace" text COLLATE "C" NOT NULL, "kind" text COLLATE "C" NOT NULL, "name" text COLLATE "C" NOT NULL, "spec" jsonb, "labels" jsonb NOT NULL DEFAULT '{}', "builtin" boolean NOT NULL DEFAULT false, "updated_by" text NOT NULL, "deleted_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "CHK_registry_entries_kind" CHECK ("kind" IN ('actor', 'tool', 'skill', 'profile')), CONSTRAINT "PK_registry_entries" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_registry_entries_name" ON "registry_entries"  ("namespace", "kind", "name") `,
    );
    await queryRunner.query(
      `CREATE TABLE "registry_changes" ("namespace" text COLLATE "C" NOT NULL, "seq" bigint NOT NULL, "kind" text COLLATE "C" NOT NULL, "name" text COLLATE "C" NOT NULL, "op" text NOT NULL, "revision" integer NOT NULL, "entity" jsonb, "at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "actor" text NOT NULL, CONSTRAINT "CHK_registry_changes_op" CHECK ("op" IN ('upsert', 'delete')), CONSTRAINT "PK_registry_changes" PRIMARY KEY ("namespace", "seq"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "registry_sequences" ("namespace" text COLLATE "C" NOT NULL, "last_seq" bigint NOT NULL DEFAULT '0', CONSTRAINT "PK_registry_sequences" PRIMARY KEY ("namespace"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "registry_entries" ADD CONSTRAINT "FK_registry_entries_namespace" FOREIGN KEY ("namespace") REFERENCES "namespaces"("slug") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "registry_changes" ADD CONSTRAINT "FK_registry_changes_namespace" FOREIGN KEY ("namespace") REFERENCES "namespaces"("slug") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "registry_sequences" ADD CONSTRAINT "FK_registry_sequences_namespace" FOREIGN KEY ("namespace") REFERENCES "namespaces"("slug") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "registry_sequences" DROP CONSTRAINT "FK_registry_sequences_namespace"`);
    await queryRunner.query(`ALTER TABLE "registry_changes" DROP CONSTRAINT "FK_registry_changes_namespace"`);
    await queryRunner.query(`ALTER TABLE "registry_entries" DROP CONSTRAINT "FK_registry_entries_namespace"`);
    await queryRunner.query(`DROP TABLE "registry_sequences"`);
    await queryRunner.query(`DROP TABLE "registry_changes"`);
    await queryRunner.query(`DROP INDEX "public"."UQ_registry_entries_name"`);
    await queryRunner.query(`DROP TABLE "registry_entries"`);
  }
}
