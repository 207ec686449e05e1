import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Replicas remember key ids that do not exist (so that an unknown id costs no more than a known one):
 * a key stored under such an id must reach them, so an INSERT into `api_keys` notifies
 * `cleveragents_identity` with `apikey:<id>` and marks its transaction, like an update does.
 * `down` drops the trigger and its function.
 */
export class ApiKeyInsertNotifications1796031827463 implements MigrationInterface {
  name = 'ApiKeyInsertNotifications1796031827463';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE FUNCTION "cleveragents_notify_api_key_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM set_config('cleveragents.identity_changed', 'on', true);
        PERFORM pg_notify('cleveragents_identity', 'apikey:' || NEW."id");
        RETURN NULL;
      END $$`);
    await queryRunner.query(`CREATE TRIGGER "TRG_api_keys_identity_insert" AFTER INSERT ON "api_keys"
      FOR EACH ROW EXECUTE FUNCTION "cleveragents_notify_api_key_insert"()`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_api_keys_identity_insert" ON "api_keys"`);
    await queryRunner.query(`DROP FUNCTION "cleveragents_notify_api_key_insert"()`);
  }
}
