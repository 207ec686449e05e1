import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Push-notification configs keep their secrets sealed in `secrets` (docs/protocol.md §8). Existing rows are
 * left as they are: a migration cannot know the key, so their plaintext secrets stay in `config`,
 * still readable, until the config is saved again.
 */
export class EncryptPushSecrets1795991548193 implements MigrationInterface {
  name = 'EncryptPushSecrets1795991548193';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "push_notification_configs" ADD "secrets" text`);
  }

  // Loses every sealed secret: configs saved since `up` come back without token and credentials.
  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "push_notification_configs" DROP COLUMN "secrets"`);
  }
}
