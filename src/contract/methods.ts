/**
 * The names of every `_cleveragents/{domain}/{operation}` method, grouped as a client offers them
 * (`client.plans.status(...)` calls `METHODS.plan.status`). The server declares each handler with
 * one of these names, so a method cannot be renamed on one side only.
 */
export const METHODS = {
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
  },
  sync: { pull: '_cleveragents/sync/pull', push: '_cleveragents/sync/push', status: '_cleveragents/sync/status' },
} as const;

type Leaves<T> = T extends string ? T : { [K in keyof T]: Leaves<T[K]> }[keyof T];
/** Every extension method name. */
export type ExtensionMethodName = Leaves<typeof METHODS>;

/** Every extension method name, as a list (for checks that both sides agree). */
export const EXTENSION_METHOD_NAMES: readonly ExtensionMethodName[] = Object.values(METHODS).flatMap(
  (group) => Object.values(group) as ExtensionMethodName[],
);
