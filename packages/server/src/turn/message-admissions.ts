import { Injectable } from '@nestjs/common';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { ValidationError } from '../common/domain.errors.js';
import { planPaused } from '../plan-store/plan-state.errors.js';
import { clientCapabilitiesOf, gateRequestOf } from '../execution/orchestrator/client-tools.js';
import { holdersOf, requireBudgetLeft } from '../session/budgets.js';
import { foreignGateOf, pendingRequestOf, replyViolations, strayResponseViolations } from './replies.js';
import { alreadyAnswered } from '../approval-store/approval.errors.js';
import { SessionService, type SessionScope } from '../session/session.service.js';
import { TaskPlans } from '../plan-store/task-plans.js';
import { TurnTaskStore } from './turn-task.store.js';
import { AnswerOrigins } from '../approval-store/answer-origins.js';
import { ApprovalService, type ApprovalAnswer } from '../approval-store/approval.service.js';
import { APPROVAL_REQUEST_TYPE, APPROVAL_RESPONSE_TYPE, type ApprovalRequest } from '@cleveragents/contract';

/** The approval-response data part of a wire message (checked already by replyViolations), if it has one. */
function approvalAnswerOf(message: Record<string, unknown>): ApprovalAnswer | undefined {
  const parts = Array.isArray(message.parts) ? (message.parts as unknown[]) : [];
  const data = parts
    .map((part) => (part !== null && typeof part === 'object' ? (part as { data?: unknown }).data : undefined))
    .find((value) => (value as { type?: unknown } | null)?.type === APPROVAL_RESPONSE_TYPE);
  return data as ApprovalAnswer | undefined;
}

/**
 * What every SendMessage goes through before the SDK makes or continues a task (the request handler's
 * admission): the session (new, named, closed), the client's declared capabilities and gate request, the budgets of the
 * session and of a plan the task runs (-32006 when used up), and — for an answer to a waiting task —
 * whether it answers what the task waits for (-32602 naming the field), whether its plan is paused
 * (-32004) and whether its approval was answered first from elsewhere (-32004 ALREADY_ANSWERED). An approval- or
 * client-response that answers nothing waiting (on a new message, or to a task that no longer waits) is -32602
 * naming the part: it never reaches a model as text. A refused message changes nothing: the task keeps waiting.
 */
@Injectable()
export class MessageAdmissions {
  constructor(
    private readonly sessions: SessionService,
    private readonly tasks: TurnTaskStore,
    private readonly plans: TaskPlans,
    private readonly approvals: ApprovalService,
    private readonly origins: AnswerOrigins,
  ) {}

  async admit(
    scope: SessionScope,
    message: Record<string, unknown>,
    context: ServerCallContext,
  ): Promise<string | undefined> {
    const metadata =
      message.metadata !== null && typeof message.metadata === 'object'
        ? (message.metadata as Record<string, unknown>)
        : undefined;
    for (const declared of [clientCapabilitiesOf(metadata), gateRequestOf(metadata)]) {
      if ('problem' in declared) throw new ValidationError([{ field: declared.field, description: declared.problem }]);
    }
    const taskId = typeof message.taskId === 'string' && message.taskId !== '' ? message.taskId : undefined;
    if (taskId === undefined) {
      const stray = strayResponseViolations(message, 'send it with the taskId of the task that waits for it');
      if (stray.length > 0) throw new ValidationError(stray);
      const given = typeof message.contextId === 'string' && message.contextId !== '' ? message.contextId : undefined;
      return this.sessions.admit(scope, given);
    }
    await this.admitReply(scope, taskId, message, context);
    return undefined;
  }

  private async admitReply(
    scope: SessionScope,
    taskId: string,
    message: Record<string, unknown>,
    context: ServerCallContext,
  ): Promise<void> {
    // A task that is not there (or not the caller's) is the SDK's to answer (-32001), as is a finished one.
    // The SDK's own load of it for this call gets the same copy: a reply reads its task once.
    const task = await this.tasks.loadForCall(taskId, context);
    if (!task) return;
    if (task.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
      // An answer that lost to one from elsewhere (the task went on since) is told so; else a stray response.
      const late = approvalAnswerOf(message);
      if (typeof late?.requestId === 'string') await this.approvals.refuseAnswered(scope, taskId, late.requestId);
      const stray = strayResponseViolations(message, `task ${taskId} is not waiting for an answer`);
      if (stray.length > 0) throw new ValidationError(stray);
      return;
    }
    const plan = await this.plans.forTask(scope, taskId);
    if (plan?.status === 'paused') {
      throw planPaused(plan.planId, taskId, plan.status);
    }
    // An external agent's request (shown as an interrupt) is the server's approval of kind `agent`.
    const pending = pendingRequestOf(task) ?? (await this.agentGateOf(scope, task));
    // An agent's request is answered by any message: only an approval-response in it is checked.
    const free =
      pending?.type === APPROVAL_REQUEST_TYPE && pending.subject.kind === 'agent' && !approvalAnswerOf(message);
    if (pending && !free) {
      const violations = replyViolations(pending, message);
      if (violations.length > 0) throw new ValidationError(violations);
    }
    const session = await this.sessions.get(scope, task.contextId).catch(() => undefined);
    if (session) await this.sessions.requireBudgetLeft(scope, session);
    requireBudgetLeft(holdersOf(undefined, plan));
    // Last: an answer claimed is one that reaches the task. Of two answers at once, from any clients, one does.
    let answer = pending?.type === APPROVAL_REQUEST_TYPE ? approvalAnswerOf(message) : undefined;
    if (!answer && pending?.type === APPROVAL_REQUEST_TYPE && pending.subject.kind === 'agent') {
      // The person's own reply: their parts, sent to the agent as they are (an edit of the answer).
      answer = { requestId: pending.requestId, decision: 'edit', edited: message.parts };
    }
    if (answer) await this.approvals.claim(scope, taskId, answer, this.origins.of(context));
  }

  /**
   * The task's pending approval of an external agent's request, as the request it records. -32004
   * ALREADY_ANSWERED when the approval its status names was answered (or ended) already: the answer that
   * came first moved the task on, and this one reaches neither the task nor the agent.
   */
  private async agentGateOf(scope: SessionScope, task: Task): Promise<ApprovalRequest | undefined> {
    const approval = await this.approvals.pendingOf(scope, task.id);
    if (!approval) {
      const named = foreignGateOf(task);
      if (!named) return undefined;
      const ended = await this.approvals.get(scope.namespace, named, { subject: scope.owner, approver: false });
      throw alreadyAnswered(ended.approvalId, ended.state);
    }
    if (approval.subject.kind !== 'agent') return undefined;
    return {
      type: APPROVAL_REQUEST_TYPE,
      requestId: approval.requestId,
      subject: approval.subject,
      options: approval.options,
    };
  }
}
