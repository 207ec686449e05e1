import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1795989364202 implements MigrationInterface {
  name = 'InitialSchema1795989364202';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "push_notification_configs" ("namespace" text NOT NULL, "owner" text NOT NULL, "task_id" text COLLATE "C" NOT NULL, "id" text COLLATE "C" NOT NULL, "config" jsonb NOT NULL, "wire_version" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_e1e9a95c03bd70b48e84bdf501e" PRIMARY KEY ("namespace", "owner", "task_id", "id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "tasks" ("namespace" text NOT NULL, "owner" text NOT NULL, "id" text COLLATE "C" NOT NULL, "context_id" text COLLATE "C" NOT NULL, "state" text NOT NULL, "status_timestamp" TIMESTAMP WITH TIME ZONE NOT NULL, "task" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_de1f47b9c8db465276b11da6a90" PRIMARY KEY ("namespace", "owner", "id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_tasks_scope_state_recent" ON "tasks"  ("namespace", "owner", "state", "status_timestamp", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_tasks_scope_context_recent" ON "tasks"  ("namespace", "owner", "context_id", "status_timestamp", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_tasks_scope_recent" ON "tasks"  ("namespace", "owner", "status_timestamp", "id") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_tasks_scope_recent"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_tasks_scope_context_recent"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_tasks_scope_state_recent"`);
    await queryRunner.query(`DROP TABLE "tasks"`);
    await queryRunner.query(`DROP TABLE "push_notification_configs"`);
  }
}
