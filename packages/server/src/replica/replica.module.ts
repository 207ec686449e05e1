import { Module } from '@nestjs/common';
import { ExecutionModule } from '../execution/execution.module.js';
import { PushModule } from '../push/push.module.js';
import { TurnModule } from '../turn/turn.module.js';
import { RemoteTaskEvents } from './remote-task-events.js';
import { RemoteTurnControls } from './remote-turn-controls.js';
import { TaskRecovery } from './task-recovery.js';
import { TakeOvers } from './take-overs.js';
import { TaskSubscriptions } from './task-subscriptions.js';
import { TurnStops } from './turn-stops.js';

/**
 * Turns across replicas (docs/protocol.md §10): runs whose replica died taken over (and every running run after a
 * restart), CancelTask and `plan/pause` relayed to the replica running the turn, and a task's live events
 * relayed to the replica serving its SubscribeToTask; what a turn taken over stores is pushed to the
 * task's webhooks.
 */
@Module({
  imports: [ExecutionModule, TurnModule, PushModule],
  providers: [TaskRecovery, TakeOvers, RemoteTurnControls, RemoteTaskEvents, TurnStops, TaskSubscriptions],
  exports: [TaskRecovery, RemoteTurnControls, RemoteTaskEvents, TurnStops, TaskSubscriptions],
})
export class ReplicaModule {}
