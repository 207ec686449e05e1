import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A task in a terminal state (completed, failed, canceled, rejected) never changes in normal
 * operation, so every replica keeps recently read or written ones in memory. Should one change or be
 * deleted anyway (an operator's SQL, a purge), these statement triggers tell every replica through
 * `NOTIFY cleveragents_tasks '*'`, at the commit, and the replicas drop those tasks from memory.
 * Statements that touch no finished task notify nothing. `down` drops the triggers and the function.
 */
export class FinishedTaskNotifications1796006434370 implements MigrationInterface {
  name = 'FinishedTaskNotifications1796006434370';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE FUNCTION "cleveragents_notify_finished_tasks"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify('cleveragents_tasks', '*');
        ELSIF EXISTS (SELECT 1 FROM old_rows o WHERE o."state" IN
            ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED')) THEN
          PERFORM pg_notify('cleveragents_tasks', '*');
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`CREATE TRIGGER "TRG_tasks_finished_update" AFTER UPDATE ON "tasks"
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "cleveragents_notify_finished_tasks"()`);
    await queryRunner.query(`CREATE TRIGGER "TRG_tasks_finished_delete" AFTER DELETE ON "tasks"
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "cleveragents_notify_finished_tasks"()`);
    await queryRunner.query(`CREATE TRIGGER "TRG_tasks_finished_truncate" AFTER TRUNCATE ON "tasks"
      FOR EACH STATEMENT EXECUTE FUNCTION "cleveragents_notify_finished_tasks"()`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_tasks_finished_truncate" ON "tasks"`);
    await queryRunner.query(`DROP TRIGGER "TRG_tasks_finished_delete" ON "tasks"`);
    await queryRunner.query(`DROP TRIGGER "TRG_tasks_finished_update" ON "tasks"`);
    await queryRunner.query(`DROP FUNCTION "cleveragents_notify_finished_tasks"()`);
  }
}
