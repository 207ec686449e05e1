import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Budgets counted (docs/protocol.md §5): `usage` (tokens, tool calls, wall time) on sessions and plans, null until
 * something ran; plans found by the task that runs them. `down` drops both columns and the index.
 */
export class BudgetUsage1796024011571 implements MigrationInterface {
  name = 'BudgetUsage1796024011571';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "sessions" ADD "usage" jsonb`);
    await queryRunner.query(`ALTER TABLE "plans" ADD "usage" jsonb`);
    await queryRunner.query(`CREATE INDEX "IDX_plans_task" ON "plans"  ("namespace", "owner", "task_id") `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_plans_task"`);
    await queryRunner.query(`ALTER TABLE "plans" DROP COLUMN "usage"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "usage"`);
  }
}
