import { Column, CreateDateColumn, Entity, Index, UpdateDateColumn } from 'typeorm';
import { OwnerScopedColumns } from './owner-scoped-columns.js';

/**
 * One A2A task in its (namespace, owner) scope. The task itself is kept whole as the SDK's
 * canonical JSON (`Task.toJSON`); the other columns are copies of what ListTasks filters and sorts on.
 * `id` and `context_id` use the "C" collation so that ordering is bytewise and identical on every
 * server, whatever its default locale.
 */
@Entity({ name: 'tasks' })
// ListTasks reads these backwards: (status_timestamp DESC, id DESC) within a scope, optionally
// narrowed by context or state. A B-tree scanned backwards serves the descending order.
@Index('IDX_tasks_scope_recent', ['namespace', 'owner', 'statusTimestamp', 'id'])
@Index('IDX_tasks_scope_context_recent', ['namespace', 'owner', 'contextId', 'statusTimestamp', 'id'])
@Index('IDX_tasks_scope_state_recent', ['namespace', 'owner', 'state', 'statusTimestamp', 'id'])
export class TaskEntity extends OwnerScopedColumns {
  @Column({ name: 'context_id', type: 'text', collation: 'C' })
  contextId: string;

  /** The A2A state name, e.g. `TASK_STATE_WORKING`. */
  @Column({ type: 'text' })
  state: string;

  /** `status.timestamp`; `-infinity` when the task has none, so it sorts last. */
  @Column({ name: 'status_timestamp', type: 'timestamptz' })
  statusTimestamp: Date;

  @Column({ type: 'jsonb' })
  task: Record<string, unknown>;

  /** The sequence number of the last event of the task's log (task_events) this row includes; 0 for none. */
  @Column({ name: 'last_sequence', type: 'bigint', default: 0 })
  lastSequence: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
