import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import { TaskScopedColumns } from './owner-scoped-columns.js';

/**
 * One event of a task's log (docs/execution.md, "The event log"): what a stream showed, in order. `seq` is
 * the task's own sequence number, from 1 with no gap, given out by the task's row (`tasks.last_sequence`)
 * in the statement that stores the event with the task it led to. `event` is the SDK's `StreamResponse`
 * JSON of the event. Old events are dropped by age and by count per task (TaskEventLog.prune).
 */
@Entity({ name: 'task_events' })
// Retention drops events by age: found through their creation time.
@Index('IDX_task_events_created', ['createdAt'])
export class TaskEventEntity extends TaskScopedColumns {
  @PrimaryColumn({ type: 'bigint' })
  seq: string;

  /** `json`, not `jsonb`: kept as the text it was written, never decomposed (it is only ever read back whole). */
  @Column({ type: 'json' })
  event: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
