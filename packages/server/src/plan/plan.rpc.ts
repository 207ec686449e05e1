import { METHODS } from '@cleveragents/contract';
import type {
  ClientCapabilities,
  CreatePlanParams,
  DeletedPlan,
  ExecutePlanParams,
  ListPlansParams,
  PlanChangeParams,
  PlanExecution,
  PlanKeyParams,
  PlanPage,
  PlanStatusView,
  PlanView,
  UpdatePlanParams,
} from '@cleveragents/contract';
import type { Acting } from '../common/actor.js';
import type { Principal } from '../common/principal.js';
import type { StoreScope } from '../database/store-scope.js';
import { ActingAs, CallPrincipal, CallerScope, RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { PlanService } from '../plan-store/plan.service.js';
import { limitsOf } from '../session/budgets.js';
import { PlanRuns } from './plan-runs.js';

/**
 * `_cleveragents/plan/*` (docs/protocol.md §6.5); `plan/execute` runs a plan as an A2A task. A plan is its owner's: another caller, even an owner of the namespace, gets -32001
 * PLAN_NOT_FOUND, as for a plan that does not exist.
 */
@RpcHandlers()
export class PlanRpc {
  constructor(
    private readonly plans: PlanService,
    private readonly runs: PlanRuns,
  ) {}

  @RpcMethod(METHODS.plan.create, {
    role: 'member',
    errors: ['SESSION_NOT_FOUND'],
    description: 'Draft a plan: a goal, its entries, a profile and a budget, optionally in one of your open sessions',
  })
  create(params: CreatePlanParams, @CallerScope() scope: StoreScope, @ActingAs() by: Acting): Promise<PlanView> {
    return this.plans.create(
      scope,
      {
        sessionId: params.sessionId ?? undefined,
        goal: params.goal,
        entries: params.entries ?? undefined,
        profile: params.profile ?? undefined,
        budget: limitsOf(params.budget),
      },
      by,
    );
  }

  @RpcMethod(METHODS.plan.get, {
    role: 'viewer',
    errors: ['PLAN_NOT_FOUND'],
    description: 'One of your plans by planId',
  })
  get(params: PlanKeyParams, @CallerScope() scope: StoreScope): Promise<PlanView> {
    return this.plans.get(scope, params.planId);
  }

  @RpcMethod(METHODS.plan.status, {
    role: 'viewer',
    errors: ['PLAN_NOT_FOUND'],
    description: "A plan's status, revision, entry counts by status and task",
  })
  status(params: PlanKeyParams, @CallerScope() scope: StoreScope): Promise<PlanStatusView> {
    return this.plans.status(scope, params.planId);
  }

  @RpcMethod(METHODS.plan.list, {
    role: 'viewer',
    errors: ['INVALID_PAGE_TOKEN'],
    description: 'Your plans in a namespace, newest first, optionally of one status or one session',
  })
  list(params: ListPlansParams, @CallerScope() scope: StoreScope): Promise<PlanPage> {
    return this.plans.list(scope, {
      status: params.status ?? undefined,
      sessionId: params.sessionId ?? undefined,
      pageSize: params.pageSize,
      pageToken: params.pageToken,
    });
  }

  @RpcMethod(METHODS.plan.update, {
    role: 'member',
    errors: ['PLAN_NOT_FOUND', 'REVISION_CONFLICT', 'INVALID_TRANSITION'],
    description: "Replace a draft or paused plan's goal, entries, profile or budget",
  })
  update(params: UpdatePlanParams, @CallerScope() scope: StoreScope, @ActingAs() by: Acting): Promise<PlanView> {
    return this.plans.update(
      scope,
      params.planId,
      {
        goal: params.goal ?? undefined,
        entries: params.entries ?? undefined,
        profile: params.profile ?? undefined,
        budget: limitsOf(params.budget),
      },
      params.expectedRevision ?? undefined,
      by,
    );
  }

  @RpcMethod(METHODS.plan.approve, {
    role: 'member',
    errors: ['PLAN_NOT_FOUND', 'REVISION_CONFLICT', 'INVALID_TRANSITION'],
    description: 'Approve a draft plan',
  })
  approve(params: PlanChangeParams, @CallerScope() scope: StoreScope, @ActingAs() by: Acting): Promise<PlanView> {
    return this.plans.transition(scope, params.planId, 'approve', params.expectedRevision ?? undefined, by);
  }

  @RpcMethod(METHODS.plan.execute, {
    role: 'member',
    errors: [
      'PLAN_NOT_FOUND',
      'REVISION_CONFLICT',
      'INVALID_TRANSITION',
      'NO_ORCHESTRATOR',
      'SESSION_NOT_OPEN',
      'PLAN_NOT_STARTED',
    ],
    description: 'Run an approved plan as an A2A task in its session; answers the taskId to stream, get or cancel',
  })
  execute(
    params: ExecutePlanParams,
    @CallerScope() scope: StoreScope,
    @ActingAs() by: Acting,
    @CallPrincipal() principal: Principal,
  ): Promise<PlanExecution> {
    return this.runs.execute(
      scope,
      params.planId,
      params.expectedRevision ?? undefined,
      { ...by, principal },
      capabilitiesOf(params.clientCapabilities),
    );
  }

  @RpcMethod(METHODS.plan.pause, {
    role: 'member',
    errors: ['PLAN_NOT_FOUND', 'REVISION_CONFLICT', 'INVALID_TRANSITION'],
    description: 'Pause an executing plan: its task stops where it is and waits for plan/resume',
  })
  pause(params: PlanChangeParams, @CallerScope() scope: StoreScope, @ActingAs() by: Acting): Promise<PlanView> {
    return this.runs.pause(scope, params.planId, params.expectedRevision ?? undefined, by);
  }

  @RpcMethod(METHODS.plan.resume, {
    role: 'member',
    errors: ['PLAN_NOT_FOUND', 'REVISION_CONFLICT', 'INVALID_TRANSITION', 'PLAN_FAILED'],
    description: 'Resume a paused plan: its task goes on from where it stopped',
  })
  resume(params: PlanChangeParams, @CallerScope() scope: StoreScope, @ActingAs() by: Acting): Promise<PlanView> {
    return this.runs.resume(scope, params.planId, params.expectedRevision ?? undefined, by);
  }

  @RpcMethod(METHODS.plan.cancel, {
    role: 'member',
    errors: ['PLAN_NOT_FOUND', 'REVISION_CONFLICT', 'INVALID_TRANSITION'],
    description: 'Cancel a plan that is draft, approved, executing or paused (and its task, as CancelTask does)',
  })
  cancel(params: PlanChangeParams, @CallerScope() scope: StoreScope, @ActingAs() by: Acting): Promise<PlanView> {
    return this.runs.cancel(scope, params.planId, params.expectedRevision ?? undefined, by);
  }

  @RpcMethod(METHODS.plan.delete, {
    role: 'member',
    errors: ['PLAN_NOT_FOUND', 'REVISION_CONFLICT', 'INVALID_TRANSITION'],
    description: 'Delete a plan that is not executing or paused',
  })
  delete(params: PlanChangeParams, @CallerScope() scope: StoreScope, @ActingAs() by: Acting): Promise<DeletedPlan> {
    return this.plans.delete(scope, params.planId, params.expectedRevision ?? undefined, by);
  }
}

/** What the caller declared, each part it left out false (as a message's metadata is read). */
function capabilitiesOf(declared: ExecutePlanParams['clientCapabilities']): ClientCapabilities | undefined {
  if (!declared) return undefined;
  return {
    fs: { read: declared.fs?.read === true, write: declared.fs?.write === true },
    terminal: declared.terminal === true,
    ...(declared.workspace !== undefined ? { workspace: declared.workspace } : {}),
  };
}
