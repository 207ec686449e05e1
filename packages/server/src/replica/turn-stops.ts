import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { ownerCallContext } from '../database/store-scope.js';
import { TypeOrmTaskStore } from '../database/typeorm-task.store.js';
import type { SessionScope } from '../session/session.service.js';
import { RunningTurns } from '../turn/running-turns.js';
import { SessionEventBuses } from '../turn/session-event-buses.js';
import type { TaskEventRelay } from './event-relay.js';
import { RemoteTaskEvents } from './remote-task-events.js';
import { RemoteTurnControls, type TurnControlAction } from './remote-turn-controls.js';

/** How long plan/pause waits for the paused status of a turn stopped here to be stored. */
const STORE_WAIT_MS = 5000;
/** How long a stop relayed to another replica waits for the task to rest there. */
const RELAYED_STOP_WAIT_MS = 15_000;

/**
 * CancelTask and `plan/pause` of a turn wherever it runs: here, or on the replica holding its lease. Each waits
 * for what it awaits to be told, not by reading the task again and again: the recording's commit here, the
 * task's relayed events from there (docs/protocol.md §10), bounded by the Clock.
 */
@Injectable()
export class TurnStops {
  constructor(
    private readonly running: RunningTurns,
    private readonly buses: SessionEventBuses,
    private readonly controls: RemoteTurnControls,
    private readonly events: RemoteTaskEvents,
    private readonly tasks: TypeOrmTaskStore,
    private readonly clock: Clock,
  ) {}

  /**
   * Pauses the task's turn, here or where it runs; resolves once its paused status is stored (or the wait ran
   * out). Nothing to do when no turn of it runs: it waits for its client already, or has ended.
   */
  async pause(scope: SessionScope, taskId: string): Promise<void> {
    if (await this.running.pauseHere(scope, taskId)) {
      const recording = this.buses.recordingOf(scope, taskId);
      if (recording) await this.clock.within(STORE_WAIT_MS, recording.settled());
      return;
    }
    await this.elsewhere(scope, taskId, 'pause');
  }

  /**
   * Asks the replica running the task's turn to cancel it, and resolves once the task rested there (or the
   * wait ran out). False when no other live replica runs it.
   */
  cancelElsewhere(scope: SessionScope, taskId: string): Promise<boolean> {
    return this.elsewhere(scope, taskId, 'cancel');
  }

  private async elsewhere(scope: SessionScope, taskId: string, action: TurnControlAction): Promise<boolean> {
    const context = ownerCallContext(scope);
    // Attached before the request, so the status the stop leads to cannot pass unseen.
    const relay = await this.events.open(scope, taskId, () => this.tasks.load(taskId, context)).catch(() => undefined);
    try {
      if (!(await this.controls.requestElsewhere(scope, taskId, action))) return false;
      if (relay) await this.clock.within(RELAYED_STOP_WAIT_MS, untilRests(relay));
      return true;
    } finally {
      relay?.close();
    }
  }
}

/** Resolves when the relayed events end: the task rests (final, or waiting for input), or the relay ended. */
async function untilRests(relay: TaskEventRelay): Promise<void> {
  for await (const event of relay.events()) void event;
}
