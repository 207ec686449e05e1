import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Approval timeouts (docs/plans.md#approval-timeouts): when a pending approval's profile timeout runs out
 * (`expires_at`, null without one) and what happens then (`on_timeout`: deny or keep-waiting), so that a
 * restarted server arms them again; an index finds the pending ones a deadline denies. `down` drops both.
 */
export class ApprovalTimeouts1796690000001 implements MigrationInterface {
  name = 'ApprovalTimeouts1796690000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "approvals" ADD "expires_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`ALTER TABLE "approvals" ADD "on_timeout" text`);
    await queryRunner.query(
      `CREATE INDEX "IDX_approvals_pending_deadline" ON "approvals"  ("expires_at") WHERE "state" = 'pending' AND "on_timeout" = 'deny'`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_approvals_pending_deadline"`);
    await queryRunner.query(`ALTER TABLE "approvals" DROP COLUMN "on_timeout"`);
    await queryRunner.query(`ALTER TABLE "approvals" DROP COLUMN "expires_at"`);
  }
}
