import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Identity and tenancy (docs/protocol.md §6.1, §6.6, §8): namespaces (hierarchical, a parent cannot go while a
 * child exists), their members, API keys (hashed; a name unique among a namespace's unrevoked keys)
 * and the audit log. Members and keys go with their namespace; the audit log keeps the history.
 * `down` drops all four tables and what they hold.
 */
export class IdentityAndTenancy1795995338629 implements MigrationInterface {
  name = 'IdentityAndTenancy1795995338629';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "namespaces" ("slug" text COLLATE "C" NOT NULL, "parent" text COLLATE "C", "display_name" text NOT NULL, "description" text NOT NULL DEFAULT '', "revision" integer NOT NULL DEFAULT '1', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "created_by" text NOT NULL, CONSTRAINT "CHK_namespaces_slug" CHECK (length("slug") <= 200 AND "slug" ~ '^[a-z0-9]+(-[a-z0-9]+)*(/[a-z0-9]+(-[a-z0-9]+)*)*$'), CONSTRAINT "PK_namespaces" PRIMARY KEY ("slug"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_namespaces_parent" ON "namespaces"  ("parent") `);
    await queryRunner.query(
      `CREATE TABLE "namespace_members" ("namespace" text COLLATE "C" NOT NULL, "subject" text COLLATE "C" NOT NULL, "role" text NOT NULL, "revision" integer NOT NULL DEFAULT '1', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "created_by" text NOT NULL, CONSTRAINT "CHK_namespace_members_role" CHECK ("role" IN ('owner', 'admin', 'member', 'viewer')), CONSTRAINT "PK_namespace_members" PRIMARY KEY ("namespace", "subject"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_namespace_members_subject" ON "namespace_members"  ("subject") `);
    await queryRunner.query(
      `CREATE TABLE "api_keys" ("id" text COLLATE "C" NOT NULL, "name" text NOT NULL, "namespace" text COLLATE "C" NOT NULL, "role" text NOT NULL, "secret_hash" text NOT NULL, "created_by" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE, "revoked_at" TIMESTAMP WITH TIME ZONE, "revoked_by" text, "last_used_at" TIMESTAMP WITH TIME ZONE, "revision" integer NOT NULL DEFAULT '1', CONSTRAINT "CHK_api_keys_role" CHECK ("role" IN ('owner', 'admin', 'member', 'viewer')), CONSTRAINT "PK_api_keys" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_api_keys_namespace_id" ON "api_keys"  ("namespace", "id") `);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_api_keys_active_name" ON "api_keys"  ("namespace", "name") WHERE "revoked_at" IS NULL`,
    );
    await queryRunner.query(
      `CREATE TABLE "audit_log" ("id" text COLLATE "C" NOT NULL, "at" TIMESTAMP WITH TIME ZONE NOT NULL, "namespace" text COLLATE "C" NOT NULL, "actor" text NOT NULL, "action" text NOT NULL, "target" text NOT NULL, "details" jsonb NOT NULL, "request_id" text, CONSTRAINT "PK_audit_log" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_audit_log_namespace_recent" ON "audit_log"  ("namespace", "at", "id") `);
    await queryRunner.query(
      `ALTER TABLE "namespaces" ADD CONSTRAINT "FK_namespaces_parent" FOREIGN KEY ("parent") REFERENCES "namespaces"("slug") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "namespace_members" ADD CONSTRAINT "FK_namespace_members_namespace" FOREIGN KEY ("namespace") REFERENCES "namespaces"("slug") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "api_keys" ADD CONSTRAINT "FK_api_keys_namespace" FOREIGN KEY ("namespace") REFERENCES "namespaces"("slug") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" DROP CONSTRAINT "FK_api_keys_namespace"`);
    await queryRunner.query(`ALTER TABLE "namespace_members" DROP CONSTRAINT "FK_namespace_members_namespace"`);
    await queryRunner.query(`ALTER TABLE "namespaces" DROP CONSTRAINT "FK_namespaces_parent"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_audit_log_namespace_recent"`);
    await queryRunner.query(`DROP TABLE "audit_log"`);
    await queryRunner.query(`DROP INDEX "public"."UQ_api_keys_active_name"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_api_keys_namespace_id"`);
    await queryRunner.query(`DROP TABLE "api_keys"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_namespace_members_subject"`);
    await queryRunner.query(`DROP TABLE "namespace_members"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_namespaces_parent"`);
    await queryRunner.query(`DROP TABLE "namespaces"`);
  }
}
