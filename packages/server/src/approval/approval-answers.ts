import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Role, TaskState, type Message } from '@a2a-js/sdk';
import {
  APPROVAL_REQUEST_TYPE,
  APPROVAL_RESPONSE_TYPE,
  type AnswerApprovalParams,
  type ApprovalRequest,
  type ApprovalView,
} from '@cleveragents/contract';
import type { Acting } from '../common/actor.js';
import { ValidationError } from '../common/domain.errors.js';
import type { Principal } from '../common/principal.js';
import { AnswerOrigins } from '../approval-store/answer-origins.js';
import { alreadyAnswered } from '../approval-store/approval.errors.js';
import { ApprovalService, type Caller } from '../approval-store/approval.service.js';
import { ownerCallContext, type StoreScope } from '../database/store-scope.js';
import { TypeOrmTaskStore } from '../database/typeorm-task.store.js';
import { dataPart } from '../execution/agent-events.js';
import { replyViolations } from '../turn/replies.js';
import { TaskControl } from '../turn/task-control.js';

/** Where a violation of the answer as a data part is, as `approval/answer`'s params name it. */
const IN_MESSAGE = /^message\.parts\[0\]\.data\./;

/**
 * `approval/answer` (docs/plans.md#approvals): the answer is checked as the in-stream answer is, then sent to the
 * waiting task as the person's message, through the same admission: claimed once, the task goes on.
 */
@Injectable()
export class ApprovalAnswers {
  constructor(
    private readonly approvals: ApprovalService,
    private readonly origins: AnswerOrigins,
    private readonly tasks: TypeOrmTaskStore,
    private readonly taskControl: TaskControl,
  ) {}

  async answer(
    namespace: string,
    params: AnswerApprovalParams,
    by: Acting & { principal: Principal; caller: Caller },
  ): Promise<ApprovalView> {
    const approval = await this.approvals.get(namespace, params.approvalId, by.caller);
    if (approval.state !== 'pending') throw alreadyAnswered(approval.approvalId, approval.state);
    const response: Record<string, unknown> = {
      type: APPROVAL_RESPONSE_TYPE,
      requestId: approval.requestId,
      decision: params.decision,
      ...(params.edited === undefined ? {} : { edited: params.edited }),
      ...(params.reason ? { reason: params.reason } : {}),
    };
    const request: ApprovalRequest = {
      type: APPROVAL_REQUEST_TYPE,
      requestId: approval.requestId,
      subject: approval.subject,
      options: approval.options,
    };
    const violations = replyViolations(request, { parts: [{ data: response }] });
    if (violations.length > 0) {
      throw new ValidationError(violations.map((v) => ({ ...v, field: v.field.replace(IN_MESSAGE, '') })));
    }
    const owner: StoreScope = { namespace: approval.namespace, owner: approval.requester };
    const task = await this.tasks.load(approval.taskId, ownerCallContext(owner));
    if (task?.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
      // The task stopped waiting some other way: the approval ends with it, unanswered.
      await this.approvals
        .settle(owner, approval.approvalId, {
          state: 'canceled',
          answeredBy: null,
          channel: null,
          reason: 'The task no longer waits for this approval',
        })
        .catch(() => undefined);
      throw alreadyAnswered(approval.approvalId, 'canceled');
    }
    const message: Message = {
      messageId: randomUUID(),
      contextId: approval.sessionId,
      taskId: approval.taskId,
      role: Role.ROLE_USER,
      parts: [dataPart(response)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    // Delivered as the requester's own message; an approver's answer is recorded as the approver's.
    const requester = by.principal.subject === approval.requester ? by.principal : undefined;
    const context = this.origins.mark(ownerCallContext(owner, requester), {
      subject: by.actor.subject,
      channel: 'method',
      requestId: by.requestId,
    });
    await this.taskControl.answer(message, context);
    return this.approvals.get(namespace, approval.approvalId, by.caller);
  }
}
