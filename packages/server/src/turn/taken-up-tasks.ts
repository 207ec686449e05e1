import type { SessionScope } from '../session/session.service.js';

/**
 * Told when a turn here takes up a task that was waiting for input (an answer, `plan/resume`), or a task
 * with no bus here was canceled as it stood: another replica may hold the task's bus, with subscribers
 * waiting on it for what comes next. Declared here, where turns run; src/replica provides it (it tells
 * the other replicas).
 */
export abstract class TakenUpTasks {
  abstract announce(scope: SessionScope, taskId: string): void;
}
