import {
  AnswerApprovalParams,
  ApprovalKeyParams,
  ApprovalPage,
  ApprovalView,
  ApprovalWebhookList,
  ApprovalWebhookView,
  CreateApprovalWebhookParams,
  CreatedApprovalWebhook,
  DeleteApprovalWebhookParams,
  ListApprovalsParams,
  ListApprovalWebhooksParams,
} from './methods/approval.js';
import { AuditPage, ListAuditParams } from './methods/audit.js';
import {
  ApiKeyPage,
  ApiKeyView,
  CreateApiKeyParams,
  CreatedApiKey,
  ListApiKeysParams,
  RevokeApiKeyParams,
  Whoami,
} from './methods/auth.js';
import { NoParamsSchema } from './methods/common.js';
import { HealthReport, ServerInfo } from './methods/diagnostics.js';
import type { z } from 'zod';
import {
  CreateNamespaceParams,
  DeletedNamespace,
  DeleteNamespaceParams,
  GetNamespaceParams,
  ListMembersParams,
  ListNamespacesParams,
  MemberPage,
  MemberView,
  NamespacePage,
  NamespaceUsage,
  NamespaceUsageParams,
  NamespaceView,
  RemovedMember,
  RemoveMemberParams,
  SetMemberParams,
  UpdateNamespaceParams,
} from './methods/namespace.js';
import {
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
} from './methods/plan.js';
import {
  CreateEntryParams,
  DeletedEntry,
  DeleteEntryParams,
  EntryKeyParams,
  ListEntriesParams,
  RegistryEntry,
  RegistryPage,
  UpdateEntryParams,
} from './methods/registry.js';
import {
  AssembleContextParams,
  AssembledContextView,
  CloseSessionParams,
  CreateSessionParams,
  ListSessionsParams,
  SessionHistoryPage,
  SessionHistoryParams,
  SessionKeyParams,
  SessionPage,
  SessionView,
  UpdateSessionParams,
} from './methods/session.js';
import { PullParams, PullResult, PushParams, PushResult, SyncStatus, SyncStatusParams } from './methods/sync.js';

/**
 * The names of every `_cleveragents/{domain}/{operation}` method, grouped as a client offers them
 * (`client.plans.status(...)` calls `METHODS.plan.status`). The server declares each handler with
 * one of these names, so a method cannot be renamed on one side only.
 */
export const METHODS = {
  approval: {
    list: '_cleveragents/approval/list',
    get: '_cleveragents/approval/get',
    answer: '_cleveragents/approval/answer',
    webhookCreate: '_cleveragents/approval/webhook/create',
    webhookList: '_cleveragents/approval/webhook/list',
    webhookDelete: '_cleveragents/approval/webhook/delete',
  },
  audit: { list: '_cleveragents/audit/list' },
  auth: {
    whoami: '_cleveragents/auth/whoami',
    apikeyCreate: '_cleveragents/auth/apikey/create',
    apikeyList: '_cleveragents/auth/apikey/list',
    apikeyRevoke: '_cleveragents/auth/apikey/revoke',
  },
  context: { assemble: '_cleveragents/context/assemble' },
  diagnostics: { health: '_cleveragents/diagnostics/health', info: '_cleveragents/diagnostics/info' },
  namespace: {
    create: '_cleveragents/namespace/create',
    get: '_cleveragents/namespace/get',
    list: '_cleveragents/namespace/list',
    update: '_cleveragents/namespace/update',
    delete: '_cleveragents/namespace/delete',
    membersList: '_cleveragents/namespace/members/list',
    membersSet: '_cleveragents/namespace/members/set',
    membersRemove: '_cleveragents/namespace/members/remove',
    usage: '_cleveragents/namespace/usage',
  },
  plan: {
    create: '_cleveragents/plan/create',
    get: '_cleveragents/plan/get',
    list: '_cleveragents/plan/list',
    update: '_cleveragents/plan/update',
    delete: '_cleveragents/plan/delete',
    status: '_cleveragents/plan/status',
    approve: '_cleveragents/plan/approve',
    execute: '_cleveragents/plan/execute',
    pause: '_cleveragents/plan/pause',
    resume: '_cleveragents/plan/resume',
    cancel: '_cleveragents/plan/cancel',
  },
  registry: {
    create: '_cleveragents/registry/create',
    get: '_cleveragents/registry/get',
    list: '_cleveragents/registry/list',
    update: '_cleveragents/registry/update',
    delete: '_cleveragents/registry/delete',
  },
  session: {
    create: '_cleveragents/session/create',
    get: '_cleveragents/session/get',
    list: '_cleveragents/session/list',
    history: '_cleveragents/session/history',
    close: '_cleveragents/session/close',
    update: '_cleveragents/session/update',
  },
  sync: { pull: '_cleveragents/sync/pull', push: '_cleveragents/sync/push', status: '_cleveragents/sync/status' },
} as const;

type Leaves<T> = T extends string ? T : { [K in keyof T]: Leaves<T[K]> }[keyof T];
/** Every extension method name. */
export type ExtensionMethodName = Leaves<typeof METHODS>;

/** Every extension method name, as a list (for checks that both sides agree). */
export const EXTENSION_METHOD_NAMES: readonly ExtensionMethodName[] = Object.values(METHODS).flatMap(
  (group): ExtensionMethodName[] => Object.values(group),
);

/** The params of a method that takes none: an empty object (or none at all). */
export type NoParams = Record<string, never>;
/** The schemas of one method: what it takes, what it answers. */
export interface MethodSchemas {
  params: z.ZodType;
  result: z.ZodType;
}

/**
 * Each method's params and result schema, by name: the one declaration the server validates and publishes
 * and the client decodes with.
 */
export const METHOD_SCHEMAS = {
  [METHODS.approval.list]: { params: ListApprovalsParams, result: ApprovalPage },
  [METHODS.approval.get]: { params: ApprovalKeyParams, result: ApprovalView },
  [METHODS.approval.answer]: { params: AnswerApprovalParams, result: ApprovalView },
  [METHODS.approval.webhookCreate]: { params: CreateApprovalWebhookParams, result: CreatedApprovalWebhook },
  [METHODS.approval.webhookList]: { params: ListApprovalWebhooksParams, result: ApprovalWebhookList },
  [METHODS.approval.webhookDelete]: { params: DeleteApprovalWebhookParams, result: ApprovalWebhookView },
  [METHODS.audit.list]: { params: ListAuditParams, result: AuditPage },
  [METHODS.auth.whoami]: { params: NoParamsSchema, result: Whoami },
  [METHODS.auth.apikeyCreate]: { params: CreateApiKeyParams, result: CreatedApiKey },
  [METHODS.auth.apikeyList]: { params: ListApiKeysParams, result: ApiKeyPage },
  [METHODS.auth.apikeyRevoke]: { params: RevokeApiKeyParams, result: ApiKeyView },
  [METHODS.diagnostics.health]: { params: NoParamsSchema, result: HealthReport },
  [METHODS.diagnostics.info]: { params: NoParamsSchema, result: ServerInfo },
  [METHODS.namespace.create]: { params: CreateNamespaceParams, result: NamespaceView },
  [METHODS.namespace.get]: { params: GetNamespaceParams, result: NamespaceView },
  [METHODS.namespace.list]: { params: ListNamespacesParams, result: NamespacePage },
  [METHODS.namespace.update]: { params: UpdateNamespaceParams, result: NamespaceView },
  [METHODS.namespace.delete]: { params: DeleteNamespaceParams, result: DeletedNamespace },
  [METHODS.namespace.membersList]: { params: ListMembersParams, result: MemberPage },
  [METHODS.namespace.membersSet]: { params: SetMemberParams, result: MemberView },
  [METHODS.namespace.membersRemove]: { params: RemoveMemberParams, result: RemovedMember },
  [METHODS.namespace.usage]: { params: NamespaceUsageParams, result: NamespaceUsage },
  [METHODS.plan.create]: { params: CreatePlanParams, result: PlanView },
  [METHODS.plan.get]: { params: PlanKeyParams, result: PlanView },
  [METHODS.plan.list]: { params: ListPlansParams, result: PlanPage },
  [METHODS.plan.update]: { params: UpdatePlanParams, result: PlanView },
  [METHODS.plan.delete]: { params: PlanChangeParams, result: DeletedPlan },
  [METHODS.plan.status]: { params: PlanKeyParams, result: PlanStatusView },
  [METHODS.plan.approve]: { params: PlanChangeParams, result: PlanView },
  [METHODS.plan.execute]: { params: ExecutePlanParams, result: PlanExecution },
  [METHODS.plan.pause]: { params: PlanChangeParams, result: PlanView },
  [METHODS.plan.resume]: { params: PlanChangeParams, result: PlanView },
  [METHODS.plan.cancel]: { params: PlanChangeParams, result: PlanView },
  [METHODS.session.create]: { params: CreateSessionParams, result: SessionView },
  [METHODS.session.get]: { params: SessionKeyParams, result: SessionView },
  [METHODS.session.list]: { params: ListSessionsParams, result: SessionPage },
  [METHODS.session.history]: { params: SessionHistoryParams, result: SessionHistoryPage },
  [METHODS.session.close]: { params: CloseSessionParams, result: SessionView },
  [METHODS.session.update]: { params: UpdateSessionParams, result: SessionView },
  [METHODS.context.assemble]: { params: AssembleContextParams, result: AssembledContextView },
  [METHODS.registry.create]: { params: CreateEntryParams, result: RegistryEntry },
  [METHODS.registry.get]: { params: EntryKeyParams, result: RegistryEntry },
  [METHODS.registry.list]: { params: ListEntriesParams, result: RegistryPage },
  [METHODS.registry.update]: { params: UpdateEntryParams, result: RegistryEntry },
  [METHODS.registry.delete]: { params: DeleteEntryParams, result: DeletedEntry },
  [METHODS.sync.pull]: { params: PullParams, result: PullResult },
  [METHODS.sync.push]: { params: PushParams, result: PushResult },
  [METHODS.sync.status]: { params: SyncStatusParams, result: SyncStatus },
} as const satisfies { readonly [M in ExtensionMethodName]: MethodSchemas };

/**
 * Every extension method's params and result, by name, as its schemas make them: a client types
 * `call<M>(method, params: ParamsOf<M>): Promise<ResultOf<M>>` with it; the server's handlers take ParsedParamsOf.
 */
export type ExtensionMethods = {
  [M in ExtensionMethodName]: {
    params: z.input<(typeof METHOD_SCHEMAS)[M]['params']>;
    result: z.output<(typeof METHOD_SCHEMAS)[M]['result']>;
  };
};

/** What method `M` takes as `params`, as a caller sends them. */
export type ParamsOf<M extends ExtensionMethodName> = ExtensionMethods[M]['params'];
/** `M`'s params as its schema makes them: what the server's handler receives. */
export type ParsedParamsOf<M extends ExtensionMethodName> = z.output<(typeof METHOD_SCHEMAS)[M]['params']>;
/** What method `M` answers as `result`. */
export type ResultOf<M extends ExtensionMethodName> = ExtensionMethods[M]['result'];

// Nothing is declared that is not a name (the `satisfies` above: every name is declared).
type UnknownNames = Exclude<keyof typeof METHOD_SCHEMAS, ExtensionMethodName>;
const onlyNames: [UnknownNames] extends [never] ? true : never = true;
void onlyNames;

/** The schemas of method `name`, when the contract declares them as schemas. */
export function methodSchemasOf(name: string): MethodSchemas | undefined {
  return (METHOD_SCHEMAS as Readonly<Record<string, MethodSchemas | undefined>>)[name];
}
