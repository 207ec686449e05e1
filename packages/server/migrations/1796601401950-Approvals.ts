import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Approvals (docs/plans.md#approvals): one row per gate a task of an owner waited at, with what it asked
 * (subject, its sha-256, the options) and how it ended; at most one pending per task (a partial unique index),
 * so that an answer is claimed once. `down` drops the table.
 */
export class Approvals1796601401950 implements MigrationInterface {
  name = 'Approvals1796601401950';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "approvals" ("namespace" text NOT NULL, "owner" text NOT NULL, "id" text COLLATE "C" NOT NULL, "session_id" text NOT NULL, "task_id" text NOT NULL, "request_id" text NOT NULL, "subject" jsonb NOT NULL, "subject_hash" text NOT NULL, "options" jsonb NOT NULL, "state" text NOT NULL DEFAULT 'pending', "asked_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "answered_at" TIMESTAMP WITH TIME ZONE, "answered_by" text, "channel" text, "reason" text, "edited" jsonb, "created_seq" BIGSERIAL NOT NULL, CONSTRAINT "PK_1ed17442311c0a983ff42ce620a" PRIMARY KEY ("namespace", "owner", "id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "IDX_approvals_pending_task" ON "approvals"  ("namespace", "owner", "task_id") WHERE "state" = 'pending'`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_approvals_task" ON "approvals"  ("namespace", "owner", "task_id") `);
    await queryRunner.query(
      `CREATE INDEX "IDX_approvals_namespace_recent" ON "approvals"  ("namespace", "created_seq") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_approvals_scope_recent" ON "approvals"  ("namespace", "owner", "created_seq") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_approvals_scope_recent"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_approvals_namespace_recent"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_approvals_task"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_approvals_pending_task"`);
    await queryRunner.query(`DROP TABLE "approvals"`);
  }
}
