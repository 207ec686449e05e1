import { Check, Column, Entity, Index } from 'typeorm';
import { TaskScopedColumns } from '../database/owner-scoped-columns.js';
import { TRACE_PARENT_CHECK } from '../telemetry/stored-trace.js';

/**
 * What the session workflow knows of a task's run on an actor backend, kept so that a restarted
 * server can finish what it was doing: which backend and actor run it, the turn's input, what the
 * backend asked to remember (a remote run id, a checkpoint), and whether a turn is running now.
 * `running` rows are what recovery looks at; a task's row lives and goes with the task's scope.
 */
@Entity({ name: 'task_runs' })
@Index('IDX_task_runs_running', ['updatedAt'], { where: `state = 'running'` })
@Check('CHK_task_runs_trace_parent', TRACE_PARENT_CHECK)
export class TaskRunEntity extends TaskScopedColumns {
  @Column({ name: 'context_id', type: 'text', collation: 'C' })
  contextId: string;

  /** `local`, `langgraph` or `conformance`. */
  @Column({ type: 'text' })
  backend: string;

  /** The actor definition the run started with (a later registry change does not move a running task). */
  @Column({ type: 'jsonb' })
  actor: Record<string, unknown>;

  /** `running` while a turn runs; `resting` when it waits for input or has ended. */
  @Column({ type: 'text' })
  state: 'running' | 'resting';

  /** The current turn's user message (A2A Message JSON). */
  @Column({ type: 'jsonb' })
  input: Record<string, unknown>;

  @Column({ type: 'jsonb' })
  remembered: Record<string, unknown>;

  /** The replica running the turn, and until when its lease holds (renewed by its heartbeat). */
  @Column({ name: 'lease_owner', type: 'text', nullable: true })
  leaseOwner: string | null;

  @Column({ name: 'lease_expires_at', type: 'timestamptz', nullable: true })
  leaseExpiresAt: Date | null;

  /** The traceparent of the span that started the run or last took it over; null when nothing was traced. */
  @Column({ name: 'trace_parent', type: 'text', nullable: true })
  traceParent: string | null;

  @Column({ name: 'started_at', type: 'timestamptz', default: () => 'now()' })
  startedAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}
