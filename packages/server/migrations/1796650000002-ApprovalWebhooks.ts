import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Approval webhooks (docs/plans.md#approval-webhooks): where a namespace's new approvals are posted, the URL and
 * signing secret sealed, the last delivery's outcome; they go with their namespace. `down` drops the table.
 */
export class ApprovalWebhooks1796650000002 implements MigrationInterface {
  name = 'ApprovalWebhooks1796650000002';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "approval_webhooks" ("id" text COLLATE "C" NOT NULL, "namespace" text COLLATE "C" NOT NULL, "origin" text NOT NULL, "secrets" text NOT NULL, "created_by" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "last_delivery" jsonb, "created_seq" BIGSERIAL NOT NULL, CONSTRAINT "PK_approval_webhooks" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_approval_webhooks_namespace" ON "approval_webhooks" ("namespace", "created_seq") `,
    );
    await queryRunner.query(
      `ALTER TABLE "approval_webhooks" ADD CONSTRAINT "FK_approval_webhooks_namespace" FOREIGN KEY ("namespace") REFERENCES "namespaces"("slug") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "approval_webhooks" DROP CONSTRAINT "FK_approval_webhooks_namespace"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_approval_webhooks_namespace"`);
    await queryRunner.query(`DROP TABLE "approval_webhooks"`);
  }
}
