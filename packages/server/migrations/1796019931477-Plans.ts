import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Plans (docs/protocol.md §6.5): one row per plan of an owner in a namespace (the same scope as sessions), with
 * its goal, entries (jsonb), profile, budget, status, revision, optional session and, once executed,
 * its task; `created_seq` orders lists. `down` drops the table.
 */
export class Plans1796019931477 implements MigrationInterface {
  name = 'Plans1796019931477';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "plans" ("namespace" text NOT NULL, "owner" text NOT NULL, "id" text COLLATE "C" NOT NULL, "session_id" text, "goal" text NOT NULL, "entries" jsonb NOT NULL, "profile" text, "budget" jsonb, "status" text NOT NULL DEFAULT 'draft', "revision" integer NOT NULL DEFAULT '1', "task_id" text, "created_seq" BIGSERIAL NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_553773f459262ea262b102b9055" PRIMARY KEY ("namespace", "owner", "id"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_plans_scope_recent" ON "plans"  ("namespace", "owner", "created_seq") `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_plans_scope_recent"`);
    await queryRunner.query(`DROP TABLE "plans"`);
  }
}
