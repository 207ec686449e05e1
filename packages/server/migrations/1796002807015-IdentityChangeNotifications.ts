import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Identity change notifications (docs/security.md, "Credential cache"): every replica keeps verified
 * API keys, memberships and known namespaces in memory, and these triggers tell all of them, through
 * `NOTIFY cleveragents_identity` at the commit, which entry changed — whoever made the change (the
 * server, the admin CLI, an operator's SQL). The payload is the entry's cache key; `*` (a TRUNCATE)
 * clears everything. Each also marks its transaction (`cleveragents.identity_changed`, transaction-local)
 * so that the committing server waits for every replica to acknowledge it. An API key's use (`last_used_at`) is not a change of its identity and notifies
 * nothing. `down` drops the triggers and functions.
 */
export class IdentityChangeNotifications1796002807015 implements MigrationInterface {
  name = 'IdentityChangeNotifications1796002807015';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE FUNCTION "cleveragents_notify_api_key"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM set_config('cleveragents.identity_changed', 'on', true);
        PERFORM pg_notify('cleveragents_identity', 'apikey:' || OLD."id");
        RETURN NULL;
      END $$`);
    await queryRunner.query(`CREATE TRIGGER "TRG_api_keys_identity"
      AFTER UPDATE OF "id", "namespace", "role", "name", "secret_hash", "expires_at", "revoked_at" OR DELETE
      ON "api_keys" FOR EACH ROW EXECUTE FUNCTION "cleveragents_notify_api_key"()`);

    await queryRunner.query(`CREATE FUNCTION "cleveragents_notify_member"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM set_config('cleveragents.identity_changed', 'on', true);
        IF TG_OP <> 'INSERT' THEN
          PERFORM pg_notify('cleveragents_identity', 'member:' || OLD."subject");
        END IF;
        IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW."subject" IS DISTINCT FROM OLD."subject") THEN
          PERFORM pg_notify('cleveragents_identity', 'member:' || NEW."subject");
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`CREATE TRIGGER "TRG_namespace_members_identity"
      AFTER INSERT OR UPDATE OR DELETE ON "namespace_members"
      FOR EACH ROW EXECUTE FUNCTION "cleveragents_notify_member"()`);

    await queryRunner.query(`CREATE FUNCTION "cleveragents_notify_namespace"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM set_config('cleveragents.identity_changed', 'on', true);
        PERFORM pg_notify('cleveragents_identity', 'namespace:' || OLD."slug");
        RETURN NULL;
      END $$`);
    await queryRunner.query(`CREATE TRIGGER "TRG_namespaces_identity"
      AFTER UPDATE OF "slug" OR DELETE ON "namespaces"
      FOR EACH ROW EXECUTE FUNCTION "cleveragents_notify_namespace"()`);

    await queryRunner.query(`CREATE FUNCTION "cleveragents_notify_identity_reset"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM set_config('cleveragents.identity_changed', 'on', true);
        PERFORM pg_notify('cleveragents_identity', '*');
        RETURN NULL;
      END $$`);
    for (const table of ['api_keys', 'namespace_members', 'namespaces']) {
      await queryRunner.query(`CREATE TRIGGER "TRG_${table}_identity_truncate" AFTER TRUNCATE ON "${table}"
        FOR EACH STATEMENT EXECUTE FUNCTION "cleveragents_notify_identity_reset"()`);
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['api_keys', 'namespace_members', 'namespaces']) {
      await queryRunner.query(`DROP TRIGGER "TRG_${table}_identity_truncate" ON "${table}"`);
    }
    await queryRunner.query(`DROP FUNCTION "cleveragents_notify_identity_reset"()`);
    await queryRunner.query(`DROP TRIGGER "TRG_namespaces_identity" ON "namespaces"`);
    await queryRunner.query(`DROP FUNCTION "cleveragents_notify_namespace"()`);
    await queryRunner.query(`DROP TRIGGER "TRG_namespace_members_identity" ON "namespace_members"`);
    await queryRunner.query(`DROP FUNCTION "cleveragents_notify_member"()`);
    await queryRunner.query(`DROP TRIGGER "TRG_api_keys_identity" ON "api_keys"`);
    await queryRunner.query(`DROP FUNCTION "cleveragents_notify_api_key"()`);
  }
}
