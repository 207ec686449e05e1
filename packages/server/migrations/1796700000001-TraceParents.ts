import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where a task's run and an approval were started in a trace (docs/operations.md, "Traces"): the W3C
 * `traceparent` of the span active then, null when tracing was off, so that a take-over or a gate's answer,
 * even after a restart, is linked to it. A check keeps anything but a version-00 traceparent out. `down`
 * drops both columns.
 */
export class TraceParents1796700000001 implements MigrationInterface {
  name = 'TraceParents1796700000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "task_runs" ADD "trace_parent" text`);
    await queryRunner.query(
      `ALTER TABLE "task_runs" ADD CONSTRAINT "CHK_task_runs_trace_parent" CHECK ("trace_parent" ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$')`,
    );
    await queryRunner.query(`ALTER TABLE "approvals" ADD "trace_parent" text`);
    await queryRunner.query(
      `ALTER TABLE "approvals" ADD CONSTRAINT "CHK_approvals_trace_parent" CHECK ("trace_parent" ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$')`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "approvals" DROP CONSTRAINT "CHK_approvals_trace_parent"`);
    await queryRunner.query(`ALTER TABLE "approvals" DROP COLUMN "trace_parent"`);
    await queryRunner.query(`ALTER TABLE "task_runs" DROP CONSTRAINT "CHK_task_runs_trace_parent"`);
    await queryRunner.query(`ALTER TABLE "task_runs" DROP COLUMN "trace_parent"`);
  }
}
