import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * One checkpoint of a `local` orchestrator thread (LangGraph's BaseCheckpointSaver). `checkpoint` and
 * `metadata` are the saver's serde output, kept as bytes with the serde type beside them. Ids use the
 * "C" collation: checkpoint ids are time-ordered uuid6 strings, and "latest" is their bytewise maximum.
 */
@Entity({ name: 'local_checkpoints' })
export class LocalCheckpointEntity {
  @PrimaryColumn({ name: 'thread_id', type: 'text', collation: 'C' })
  threadId: string;

  /** The subgraph namespace; '' for the root graph. */
  @PrimaryColumn({ name: 'checkpoint_ns', type: 'text', collation: 'C' })
  checkpointNs: string;

  @PrimaryColumn({ name: 'checkpoint_id', type: 'text', collation: 'C' })
  checkpointId: string;

  @Column({ name: 'parent_checkpoint_id', type: 'text', collation: 'C', nullable: true })
  parentCheckpointId: string | null;

  @Column({ name: 'checkpoint_type', type: 'text' })
  checkpointType: string;

  @Column({ type: 'bytea' })
  checkpoint: Buffer;

  @Column({ name: 'metadata_type', type: 'text' })
  metadataType: string;

  @Column({ type: 'bytea' })
  metadata: Buffer;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
