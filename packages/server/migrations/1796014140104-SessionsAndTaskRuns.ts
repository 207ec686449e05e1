import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sessions (docs/protocol.md §6.4): one row per A2A context of an owner in a namespace, with its actor, profile,
 * budget and status; `created_seq` orders lists. Task runs: which actor backend runs each task, what it
 * remembered (a remote run id), and a lease renewed by the replica running it, so that a restarted or
 * surviving replica finishes a task whose replica died. A statement trigger on `tasks` makes the session
 * of every newly inserted task's context that has none yet (the `default` actor, origin `message`), in
 * the same statement as the task: a message that starts a context costs no round trip of its own.
 * `down` drops the trigger, its function and both tables.
 */
export class SessionsAndTaskRuns1796014140104 implements MigrationInterface {
  name = 'SessionsAndTaskRuns1796014140104';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "sessions" ("namespace" text NOT NULL, "owner" text NOT NULL, "id" text COLLATE "C" NOT NULL, "actor" text NOT NULL, "profile" text, "title" text, "budget" jsonb, "status" text NOT NULL DEFAULT 'open', "revision" integer NOT NULL DEFAULT '1', "origin" text NOT NULL DEFAULT 'create', "created_seq" BIGSERIAL NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "closed_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_1cefe89e0e8ff2560b37b0dd648" PRIMARY KEY ("namespace", "owner", "id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_sessions_scope_recent" ON "sessions"  ("namespace", "owner", "created_seq") `,
    );
    await queryRunner.query(
      `CREATE TABLE "task_runs" ("namespace" text NOT NULL, "owner" text NOT NULL, "task_id" text COLLATE "C" NOT NULL, "context_id" text COLLATE "C" NOT NULL, "backend" text NOT NULL, "actor" jsonb NOT NULL, "state" text NOT NULL, "input" jsonb NOT NULL, "remembered" jsonb NOT NULL, "lease_owner" text, "lease_expires_at" TIMESTAMP WITH TIME ZONE, "started_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_b9d69f39e7ce6b87a6e4337fe48" PRIMARY KEY ("namespace", "owner", "task_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_task_runs_running" ON "task_runs"  ("updated_at") WHERE state = 'running'`,
    );
    // Key order, as every batched writer of these tables, so that concurrent statements never deadlock.
    await queryRunner.query(`CREATE FUNCTION "cleveragents_sessions_of_new_tasks"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO "sessions" ("namespace", "owner", "id", "actor", "origin")
        SELECT DISTINCT n."namespace", n."owner", n."context_id", 'default', 'message' FROM new_rows n
        WHERE n."context_id" <> ''
        ORDER BY 1, 2, 3
        ON CONFLICT ("namespace", "owner", "id") DO NOTHING;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`CREATE TRIGGER "TRG_tasks_sessions" AFTER INSERT ON "tasks"
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "cleveragents_sessions_of_new_tasks"()`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_tasks_sessions" ON "tasks"`);
    await queryRunner.query(`DROP FUNCTION "cleveragents_sessions_of_new_tasks"()`);
    await queryRunner.query(`DROP INDEX "public"."IDX_task_runs_running"`);
    await queryRunner.query(`DROP TABLE "task_runs"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_sessions_scope_recent"`);
    await queryRunner.query(`DROP TABLE "sessions"`);
  }
}
