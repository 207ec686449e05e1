import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every task's events in order (docs/execution.md, "The event log"): `task_events` holds each event under the
 * task's own sequence number, and `tasks.last_sequence` is the number of the last event the task row includes,
 * from which the next events are numbered. Existing tasks start at 0. `down` drops both.
 */
export class TaskEvents1796537294803 implements MigrationInterface {
  name = 'TaskEvents1796537294803';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "task_events" ("namespace" text NOT NULL, "owner" text NOT NULL, "task_id" text COLLATE "C" NOT NULL, "seq" bigint NOT NULL, "event" json NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_6478a6342884af881eed9aa57ee" PRIMARY KEY ("namespace", "owner", "task_id", "seq"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_task_events_created" ON "task_events"  ("created_at") `);
    await queryRunner.query(`ALTER TABLE "tasks" ADD "last_sequence" bigint NOT NULL DEFAULT '0'`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "tasks" DROP COLUMN "last_sequence"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_task_events_created"`);
    await queryRunner.query(`DROP TABLE "task_events"`);
  }
}
