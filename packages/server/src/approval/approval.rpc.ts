import { EVERY_REQUESTER, METHODS } from '@cleveragents/contract';
import type {
  AnswerApprovalParams,
  ApprovalKeyParams,
  ApprovalPage,
  ApprovalView,
  ListApprovalsParams,
} from '@cleveragents/contract';
import type { Acting } from '../common/actor.js';
import { roleSatisfies, type Principal } from '../common/principal.js';
import { ActingAs, CallNamespace, CallPrincipal, RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { roleRequired } from '../rpc/rpc.errors.js';
import { ApprovalService, type Caller } from '../approval-store/approval.service.js';
import { ApprovalAnswers } from './approval-answers.js';

/** Who may answer the namespace's approvals besides their requesters (docs/security.md#approvals). */
const APPROVER_ROLE = 'admin';

/** The caller, as approvals see it: an approver of `namespace` when it holds the admin role there (or owner). */
export function callerIn(namespace: string, principal: Principal): Caller {
  const held = principal.roleIn(namespace);
  return { subject: principal.subject, approver: held !== undefined && roleSatisfies(held, APPROVER_ROLE) };
}

/**
 * `_cleveragents/approval/*` (docs/plans.md#approvals): the gates tasks wait at, answered from any client. A
 * requester sees and answers its own; an admin or owner of the namespace any of the namespace's. To anyone
 * else an approval is -32001 APPROVAL_NOT_FOUND, as one that does not exist.
 */
@RpcHandlers()
export class ApprovalRpc {
  constructor(
    private readonly approvals: ApprovalService,
    private readonly answers: ApprovalAnswers,
  ) {}

  @RpcMethod(METHODS.approval.list, {
    role: 'viewer',
    errors: ['INVALID_PAGE_TOKEN'],
    description:
      'Approvals in a namespace, newest first: yours (an admin: anyone\u2019s), pending unless a state is given',
  })
  list(
    params: ListApprovalsParams,
    @CallNamespace() namespace: string,
    @CallPrincipal() principal: Principal,
  ): Promise<ApprovalPage> {
    const caller = callerIn(namespace, principal);
    const requester = params.requester ?? caller.subject;
    if (requester !== caller.subject && !caller.approver) {
      throw roleRequired(
        "Listing another principal's approvals",
        namespace,
        APPROVER_ROLE,
        principal.roleIn(namespace) ?? 'none',
      );
    }
    return this.approvals.list(namespace, requester === EVERY_REQUESTER ? undefined : requester, {
      state: params.state ?? 'pending',
      sessionId: params.sessionId ?? undefined,
      pageSize: params.pageSize,
      pageToken: params.pageToken,
    });
  }

  @RpcMethod(METHODS.approval.get, {
    role: 'viewer',
    errors: ['APPROVAL_NOT_FOUND'],
    description: 'One approval by approvalId: what it asks, its subject hash and how it was answered',
  })
  get(
    params: ApprovalKeyParams,
    @CallNamespace() namespace: string,
    @CallPrincipal() principal: Principal,
  ): Promise<ApprovalView> {
    return this.approvals.get(namespace, params.approvalId, callerIn(namespace, principal));
  }

  @RpcMethod(METHODS.approval.answer, {
    role: 'member',
    errors: ['APPROVAL_NOT_FOUND', 'ALREADY_ANSWERED', 'BUDGET_EXCEEDED', 'PLAN_PAUSED'],
    description:
      'Approve, reject (with a reason) or edit a pending approval: its task goes on as if answered in-stream',
  })
  answer(
    params: AnswerApprovalParams,
    @CallNamespace() namespace: string,
    @ActingAs() by: Acting,
    @CallPrincipal() principal: Principal,
  ): Promise<ApprovalView> {
    return this.answers.answer(namespace, params, { ...by, principal, caller: callerIn(namespace, principal) });
  }
}
