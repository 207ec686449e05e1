import { Module } from '@nestjs/common';
import { RegistryModule } from '../registry/registry.module.js';
import { SessionEventBuses } from './session-event-buses.js';
import { SessionRpc } from './session.rpc.js';
import { SessionService } from './session.service.js';
import { SessionWorkflow } from './session.workflow.js';
import { TaskRecovery } from './task-recovery.js';
import { TaskRuns } from './task-runs.js';
import { RemoteTurnControls } from './remote-turn-controls.js';
import { RemoteTaskEvents } from './remote-task-events.js';
import { MessageAdmissions } from './message-admissions.js';
import { TaskPlans } from './task-plans.js';

/**
 * Sessions and the path of a message to its actor (SPEC.md §4, §5, §6.4): the session methods, the
 * workflow the A2A handler runs tasks through, the live event buses, and recovery after a restart.
 */
@Module({
  imports: [RegistryModule],
  providers: [
    SessionService,
    SessionRpc,
    SessionWorkflow,
    SessionEventBuses,
    TaskRuns,
    TaskRecovery,
    RemoteTurnControls,
    RemoteTaskEvents,
    TaskPlans,
    MessageAdmissions,
  ],
  exports: [
    SessionService,
    SessionWorkflow,
    SessionEventBuses,
    RemoteTurnControls,
    RemoteTaskEvents,
    TaskRecovery,
    TaskPlans,
    MessageAdmissions,
  ],
})
export class SessionModule {}
