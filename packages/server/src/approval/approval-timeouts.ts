import { randomUUID } from 'node:crypto';
import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Role, TaskState, type Message } from '@a2a-js/sdk';
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { APPROVAL_RESPONSE_TYPE, type ApprovalView } from '@cleveragents/contract';
import { AnswerOrigins } from '../approval-store/answer-origins.js';
import { ApprovalService, TIMEOUT_ANSWERER } from '../approval-store/approval.service.js';
import { Clock, type ClockTimer } from '../common/clock.js';
import { BusinessRuleViolation } from '../common/domain.errors.js';
import { AppConfig } from '../config/app.config.js';
import { isFinishedState } from '../database/finished-task.cache.js';
import { ownerCallContext, type StoreScope } from '../database/store-scope.js';
import { TypeOrmTaskStore } from '../database/typeorm-task.store.js';
import { dataPart } from '../execution/agent-events.js';
import { CA_APPROVAL_ID, CA_APPROVAL_KIND, CA_NAMESPACE, CA_TASK_ID } from '../telemetry/attributes.js';
import { inSpan } from '../telemetry/tracing.js';
import { TaskControl } from '../turn/task-control.js';

/** How soon a denial is tried again when its task had not yet come to rest at the gate. */
const NOT_RESTING_RETRY_MS = 1000;

/** A pending approval its timeout denies. */
type DueApproval = ApprovalView & { expiresAt: string };

const UNITS: [number, string][] = [
  [86400, 'day'],
  [3600, 'hour'],
  [60, 'minute'],
  [1, 'second'],
];

/** `seconds` in words, largest units first: 900 → "15 minutes", 5400 → "1 hour 30 minutes". */
export function durationInWords(seconds: number): string {
  const words: string[] = [];
  let left = Math.max(0, Math.round(seconds));
  for (const [size, unit] of UNITS) {
    const count = Math.floor(left / size);
    if (count === 0) continue;
    words.push(`${count} ${unit}${count === 1 ? '' : 's'}`);
    left -= count * size;
  }
  return words.length > 0 ? words.join(' ') : '0 seconds';
}

/** The true reason a gate was denied by its timeout, as the task (and its model) and the approval record it. */
export function timeoutReason(approval: Pick<ApprovalView, 'askedAt' | 'expiresAt'>): string {
  const waited = approval.expiresAt ? (Date.parse(approval.expiresAt) - Date.parse(approval.askedAt)) / 1000 : 0;
  return `No answer within ${durationInWords(waited)}: the profile's approval timeout denied it`;
}

/**
 * Approval timeouts (docs/plans.md#approval-timeouts): a pending approval whose profile says `deny` is answered
 * as rejected once its `expiresAt` passes, by the server (`system`, channel `timeout`), through the same
 * admission as a person's answer: claimed once, so a person's answer racing it either wins or gets -32004
 * ALREADY_ANSWERED, and the task goes on as after a person's rejection. The approval ends `expired`.
 * Timers are armed on the replica that asked, and by every replica from the stored approvals at boot and every
 * lease period (a deadline that passed while no replica watched applies at once); whichever replica claims the
 * approval first ends it, the others find it answered.
 */
@Injectable()
export class ApprovalTimeouts implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(ApprovalTimeouts.name);
  private readonly armed = new Map<string, ClockTimer>();
  private unsubscribe: (() => void) | undefined;
  private rescan: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly approvals: ApprovalService,
    private readonly origins: AnswerOrigins,
    private readonly tasks: TypeOrmTaskStore,
    private readonly taskControl: TaskControl,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.unsubscribe = this.approvals.onDeadline((approval) => this.arm(approval));
    await this.armStored();
    this.rescan = setInterval(() => void this.armStored(), Math.max(1000, this.config.taskLeaseSeconds * 1000));
    this.rescan.unref();
  }

  beforeApplicationShutdown(): void {
    this.stopped = true;
    clearInterval(this.rescan);
    this.unsubscribe?.();
  }

  /** The process stops watching: the deadlines are stored, and armed again by whichever replica runs next. */
  onApplicationShutdown(): void {
    this.stopped = true;
    for (const timer of this.armed.values()) timer.cancel();
    this.armed.clear();
  }

  /** Arms every stored pending approval its timeout denies that this replica does not watch yet. */
  private async armStored(): Promise<void> {
    try {
      for (const approval of await this.approvals.pendingToDeny()) this.arm(approval);
    } catch (err) {
      this.logger.warn({ msg: 'could not read the approvals a timeout denies', error: String(err) });
    }
  }

  private arm(approval: DueApproval): void {
    if (this.stopped || this.armed.has(approval.approvalId)) return;
    const left = Date.parse(approval.expiresAt) - this.clock.now();
    this.armed.set(
      approval.approvalId,
      this.clock.after(Math.max(0, left), () => void this.deny(approval)),
    );
  }

  /**
   * The approval's timeout ran out: denied through the task's admission, as a person's rejection would be, in
   * an `approval_timeout <kind>` span of its own (a new trace: no call is behind it), which the gate's wait
   * links to as what answered it and under which the task goes on.
   */
  private deny(due: DueApproval): Promise<void> {
    this.armed.delete(due.approvalId);
    if (this.stopped) return Promise.resolve();
    const attributes = {
      [CA_APPROVAL_ID]: due.approvalId,
      [CA_APPROVAL_KIND]: due.subject.kind,
      [CA_NAMESPACE]: due.namespace,
      [CA_TASK_ID]: due.taskId,
    };
    return inSpan(
      `approval_timeout ${due.subject.kind}`,
      { kind: SpanKind.INTERNAL, attributes },
      () => this.denyNow(due),
      ROOT_CONTEXT,
    );
  }

  private async denyNow(due: DueApproval): Promise<void> {
    const owner: StoreScope = { namespace: due.namespace, owner: due.requester };
    try {
      const approval = await this.approvals.get(due.namespace, due.approvalId, {
        subject: due.requester,
        approver: false,
      });
      if (approval.state !== 'pending') return;
      const task = await this.tasks.load(approval.taskId, ownerCallContext(owner));
      const state = task?.status?.state;
      if (state !== TaskState.TASK_STATE_INPUT_REQUIRED && task && !isFinishedState(state)) {
        // Asked, but its turn has not come to rest yet (its status is stored after the approval): soon.
        this.armed.set(
          due.approvalId,
          this.clock.after(NOT_RESTING_RETRY_MS, () => void this.deny(due)),
        );
        return;
      }
      if (state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
        await this.approvals.ended(owner, approval.taskId, 'canceled', 'The task no longer waits for this approval');
        return;
      }
      const message: Message = {
        messageId: randomUUID(),
        contextId: approval.sessionId,
        taskId: approval.taskId,
        role: Role.ROLE_USER,
        parts: [
          dataPart({
            type: APPROVAL_RESPONSE_TYPE,
            requestId: approval.requestId,
            decision: 'reject',
            reason: timeoutReason(approval),
          }),
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      };
      const context = this.origins.mark(ownerCallContext(owner), {
        subject: TIMEOUT_ANSWERER,
        channel: 'timeout',
        expiredBy: this.clock.date(),
      });
      await this.taskControl.answer(message, context);
    } catch (err) {
      // A person's answer (or another replica's timeout) came first: it counts.
      if (err instanceof BusinessRuleViolation && err.reason === 'ALREADY_ANSWERED') return;
      this.logger.warn({
        msg: 'could not deny an approval whose timeout ran out',
        approvalId: due.approvalId,
        error: String(err),
      });
    }
  }
}
