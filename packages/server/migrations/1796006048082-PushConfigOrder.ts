import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Push-notification configs list in registration order. `created_at` alone cannot say it: two saves
 * in the same clock tick (common on the embedded database) share it, and ties fell back to the id's
 * alphabetical order. `created_seq` is an identity column; existing rows are numbered in their
 * (created_at, id) order first. `down` drops the column.
 */
export class PushConfigOrder1796006048082 implements MigrationInterface {
  name = 'PushConfigOrder1796006048082';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "push_notification_configs" ADD "created_seq" bigint`);
    await queryRunner.query(`UPDATE "push_notification_configs" c SET "created_seq" = o.n
      FROM (SELECT "namespace", "owner", "task_id", "id", row_number() OVER (ORDER BY "created_at", "id") AS n
            FROM "push_notification_configs") o
      WHERE (c."namespace", c."owner", c."task_id", c."id") = (o."namespace", o."owner", o."task_id", o."id")`);
    await queryRunner.query(`ALTER TABLE "push_notification_configs" ALTER COLUMN "created_seq" SET NOT NULL`);
    await queryRunner.query(
      `ALTER TABLE "push_notification_configs" ALTER COLUMN "created_seq" ADD GENERATED ALWAYS AS IDENTITY`,
    );
    await queryRunner.query(`SELECT setval(pg_get_serial_sequence('"push_notification_configs"', 'created_seq'),
      (SELECT coalesce(max("created_seq"), 0) + 1 FROM "push_notification_configs"), false)`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "push_notification_configs" DROP COLUMN "created_seq"`);
  }
}
