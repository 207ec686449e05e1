import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `local` actor backend's LangGraph checkpointer (TypeOrmCheckpointSaver): a thread's checkpoints,
 * keyed by (thread, subgraph namespace, checkpoint id), and the pending writes of the tasks computed
 * from each. Writes carry no foreign key: LangGraph may store a task's writes before the checkpoint
 * they belong to has been written. `down` drops both tables (and every checkpoint with them).
 */
export class LocalCheckpoints1796013974901 implements MigrationInterface {
  name = 'LocalCheckpoints1796013974901';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "local_checkpoints" ("thread_id" text COLLATE "C" NOT NULL, "checkpoint_ns" text COLLATE "C" NOT NULL, "checkpoint_id" text COLLATE "C" NOT NULL, "parent_checkpoint_id" text COLLATE "C", "checkpoint_type" text NOT NULL, "checkpoint" bytea NOT NULL, "metadata_type" text NOT NULL, "metadata" bytea NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_31f17395ce421f178d776a6a04b" PRIMARY KEY ("thread_id", "checkpoint_ns", "checkpoint_id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "local_checkpoint_writes" ("thread_id" text COLLATE "C" NOT NULL, "checkpoint_ns" text COLLATE "C" NOT NULL, "checkpoint_id" text COLLATE "C" NOT NULL, "task_id" text COLLATE "C" NOT NULL, "idx" integer NOT NULL, "task_path" text COLLATE "C" NOT NULL DEFAULT '', "channel" text NOT NULL, "value_type" text NOT NULL, "value" bytea NOT NULL, CONSTRAINT "PK_b58ca095f0cfe155545aca94faa" PRIMARY KEY ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"))`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "local_checkpoint_writes"`);
    await queryRunner.query(`DROP TABLE "local_checkpoints"`);
  }
}
