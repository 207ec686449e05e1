import { Module } from '@nestjs/common';
import { PushModule } from '../push/push.module.js';
import { TakenUpTasks } from '../turn/taken-up-tasks.js';
import { TurnModule } from '../turn/turn.module.js';
import { RemoteTaskEvents } from './remote-task-events.js';
import { RemoteTurnControls } from './remote-turn-controls.js';
import { TaskRecovery } from './task-recovery.js';

/**
 * Turns across replicas (docs/protocol.md §10): runs whose replica died taken over (and every running run after a
 * restart), CancelTask and `plan/pause` relayed to the replica running the turn, and a task's live events
 * relayed to the replica serving its SubscribeToTask; what a turn taken over stores is pushed to the
 * task's webhooks.
 */
@Module({
  imports: [TurnModule, PushModule],
  providers: [
    TaskRecovery,
    RemoteTurnControls,
    RemoteTaskEvents,
    // The turns' port: a turn here taking up a waiting task is announced to the other replicas.
    { provide: TakenUpTasks, useExisting: RemoteTurnControls },
  ],
  exports: [TaskRecovery, RemoteTurnControls, RemoteTaskEvents],
})
export class ReplicaModule {}
