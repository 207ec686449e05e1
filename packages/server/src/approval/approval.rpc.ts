import { METHODS } from '@cleveragents/contract';
import type {
  AnswerApprovalParams,
  ApprovalKeyParams,
  ApprovalPage,
  ApprovalView,
  ListApprovalsParams,
} from '@cleveragents/contract';
import type { Acting } from '../common/actor.js';
import type { Principal } from '../common/principal.js';
import type { StoreScope } from '../database/store-scope.js';
import { ActingAs, CallPrincipal, CallerScope, RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { ApprovalService } from '../approval-store/approval.service.js';
import { ApprovalAnswers } from './approval-answers.js';

/**
 * `_cleveragents/approval/*` (docs/plans.md#approvals): the gates the caller's tasks wait at, answered from any
 * client. Another principal's approval answers -32001 APPROVAL_NOT_FOUND, as one that does not exist.
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
    description: 'The approvals your tasks wait for in a namespace (pending unless a state is given), newest first',
  })
  list(params: ListApprovalsParams, @CallerScope() scope: StoreScope): Promise<ApprovalPage> {
    return this.approvals.list(scope, {
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
  get(params: ApprovalKeyParams, @CallerScope() scope: StoreScope): Promise<ApprovalView> {
    return this.approvals.get(scope, params.approvalId);
  }

  @RpcMethod(METHODS.approval.answer, {
    role: 'member',
    errors: ['APPROVAL_NOT_FOUND', 'ALREADY_ANSWERED', 'BUDGET_EXCEEDED', 'PLAN_PAUSED'],
    description:
      'Approve, reject (with a reason) or edit a pending approval: its task goes on as if answered in-stream',
  })
  answer(
    params: AnswerApprovalParams,
    @CallerScope() scope: StoreScope,
    @ActingAs() by: Acting,
    @CallPrincipal() principal: Principal,
  ): Promise<ApprovalView> {
    return this.answers.answer(scope, params, { ...by, principal });
  }
}
