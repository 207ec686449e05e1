import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One pending write of a task, stored against the checkpoint it was computed from (BaseCheckpointSaver
 * `putWrites`). `idx` is the write's position, or a negative WRITES_IDX_MAP slot for special channels
 * (error, interrupt, resume), which a later write replaces.
 */
@Entity({ name: 'local_checkpoint_writes' })
export class LocalCheckpointWriteEntity {
  @PrimaryColumn({ name: 'thread_id', type: 'text', collation: 'C' })
  threadId: string;

  @PrimaryColumn({ name: 'checkpoint_ns', type: 'text', collation: 'C' })
  checkpointNs: string;

  @PrimaryColumn({ name: 'checkpoint_id', type: 'text', collation: 'C' })
  checkpointId: string;

  @PrimaryColumn({ name: 'task_id', type: 'text', collation: 'C' })
  taskId: string;

  @PrimaryColumn({ type: 'integer' })
  idx: number;

  /** The writing task's path (LangGraph's writesSortKey); '' when the write has none. */
  @Column({ name: 'task_path', type: 'text', collation: 'C', default: '' })
  taskPath: string;

  @Column({ type: 'text' })
  channel: string;

  @Column({ name: 'value_type', type: 'text' })
  valueType: string;

  @Column({ type: 'bytea' })
  value: Buffer;
}
