import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Task counts per (namespace, owner, state), kept by a trigger in the same transaction as the task
 * row, so that ListTasks' `totalSize` is a sum over a handful of rows instead of a count over every
 * task of the caller (≈110 ms at 1,000,000 tasks). Each scope and state has 16 counter rows and a
 * change goes to one picked at random, so concurrent writers rarely wait on the same row; only the
 * sum is meaningful (a shard may go negative). A statement touches its two rows in key order, so two
 * writers cannot deadlock. TRUNCATE of `tasks` empties the counts. `up` counts the existing tasks;
 * `down` drops the table, trigger and functions.
 */
export class TaskCounts1796003141391 implements MigrationInterface {
  name = 'TaskCounts1796003141391';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "task_counts" ("namespace" text NOT NULL, "owner" text NOT NULL, "state" text NOT NULL, "shard" smallint NOT NULL, "count" bigint NOT NULL, CONSTRAINT "PK_task_counts" PRIMARY KEY ("namespace", "owner", "state", "shard"))`,
    );
    await queryRunner.query(`CREATE FUNCTION "cleveragents_bump_task_count"(ns text, own text, st text, shard smallint, delta bigint)
      RETURNS void LANGUAGE sql AS $$
        INSERT INTO "task_counts" AS c ("namespace", "owner", "state", "shard", "count") VALUES (ns, own, st, shard, delta)
        ON CONFLICT ("namespace", "owner", "state", "shard") DO UPDATE SET "count" = c."count" + EXCLUDED."count"
      $$`);
    await queryRunner.query(`CREATE FUNCTION "cleveragents_count_tasks"() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        shard smallint := floor(random() * 16)::smallint;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM "cleveragents_bump_task_count"(NEW."namespace", NEW."owner", NEW."state", shard, 1);
        ELSIF TG_OP = 'DELETE' THEN
          PERFORM "cleveragents_bump_task_count"(OLD."namespace", OLD."owner", OLD."state", shard, -1);
        ELSIF (OLD."namespace", OLD."owner", OLD."state") IS DISTINCT FROM (NEW."namespace", NEW."owner", NEW."state") THEN
          IF (OLD."namespace", OLD."owner", OLD."state") < (NEW."namespace", NEW."owner", NEW."state") THEN
            PERFORM "cleveragents_bump_task_count"(OLD."namespace", OLD."owner", OLD."state", shard, -1);
            PERFORM "cleveragents_bump_task_count"(NEW."namespace", NEW."owner", NEW."state", shard, 1);
          ELSE
            PERFORM "cleveragents_bump_task_count"(NEW."namespace", NEW."owner", NEW."state", shard, 1);
            PERFORM "cleveragents_bump_task_count"(OLD."namespace", OLD."owner", OLD."state", shard, -1);
          END IF;
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`CREATE TRIGGER "TRG_tasks_count"
      AFTER INSERT OR DELETE OR UPDATE OF "namespace", "owner", "state" ON "tasks"
      FOR EACH ROW EXECUTE FUNCTION "cleveragents_count_tasks"()`);
    await queryRunner.query(`CREATE FUNCTION "cleveragents_reset_task_counts"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM "task_counts";
        RETURN NULL;
      END $$`);
    await queryRunner.query(`CREATE TRIGGER "TRG_tasks_count_truncate" AFTER TRUNCATE ON "tasks"
      FOR EACH STATEMENT EXECUTE FUNCTION "cleveragents_reset_task_counts"()`);
    await queryRunner.query(`INSERT INTO "task_counts" ("namespace", "owner", "state", "shard", "count")
      SELECT "namespace", "owner", "state", 0, count(*) FROM "tasks" GROUP BY "namespace", "owner", "state"`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_tasks_count_truncate" ON "tasks"`);
    await queryRunner.query(`DROP FUNCTION "cleveragents_reset_task_counts"()`);
    await queryRunner.query(`DROP TRIGGER "TRG_tasks_count" ON "tasks"`);
    await queryRunner.query(`DROP FUNCTION "cleveragents_count_tasks"()`);
    await queryRunner.query(`DROP FUNCTION "cleveragents_bump_task_count"(text, text, text, smallint, bigint)`);
    await queryRunner.query(`DROP TABLE "task_counts"`);
  }
}
