import { Module } from '@nestjs/common';
import { ApprovalStoreModule } from '../approval-store/approval-store.module.js';
import { ExecutionModule } from '../execution/execution.module.js';
import { PushModule } from '../push/push.module.js';
import { PlanStoreModule } from '../plan-store/plan-store.module.js';
import { SessionModule } from '../session/session.module.js';
import { MessageAdmissions } from './message-admissions.js';
import { RunningTurns } from './running-turns.js';
import { SessionEventBuses } from './session-event-buses.js';
import { SessionWorkflow } from './session.workflow.js';
import { TaskRunRepository } from './task-run.repository.js';
import { TaskRuns } from './task-runs.js';
import { TurnMetrics } from './turn-metrics.js';
import { TurnTaskStore } from './turn-task.store.js';
import { WaitingTasks } from './waiting-tasks.js';

/**
 * The path of a message to its actor on this replica (docs/protocol.md §4, §5): the admission of a message to
 * its session, the workflow the A2A handler runs tasks through, the task runs and their leases, and the
 * live event buses of the tasks running here.
 */
@Module({
  imports: [ExecutionModule, SessionModule, PlanStoreModule, ApprovalStoreModule, PushModule],
  providers: [
    SessionWorkflow,
    RunningTurns,
    SessionEventBuses,
    TaskRunRepository,
    TaskRuns,
    WaitingTasks,
    MessageAdmissions,
    TurnTaskStore,
    TurnMetrics,
  ],
  exports: [SessionWorkflow, RunningTurns, SessionEventBuses, TaskRuns, MessageAdmissions, TurnTaskStore],
})
export class TurnModule {}
