import { ServerCallContext } from '@a2a-js/sdk/server';

/** The (namespace, owner) pair that every stored task and push config belongs to. */
export interface StoreScope {
  namespace: string;
  owner: string;
}

/** Owner of calls that carry no authenticated user (the `none` scheme); matches Principal.anonymous. */
export const ANONYMOUS_OWNER = 'anonymous';

/**
 * The caller's scope: A2A `tenant` is the namespace (docs/protocol.md §4), absent meaning the caller's default
 * namespace (Principal.defaultNamespace when the user carries one, else the configured default); the
 * owner is the user's name.
 */
export function resolveStoreScope(context: ServerCallContext | undefined, defaultNamespace: string): StoreScope {
  const user = context?.user as { userName?: string; defaultNamespace?: unknown } | undefined;
  const userDefault =
    typeof user?.defaultNamespace === 'string' && user.defaultNamespace ? user.defaultNamespace : undefined;
  return {
    namespace: context?.tenant || userDefault || defaultNamespace,
    owner: user?.userName || ANONYMOUS_OWNER,
  };
}

/**
 * A call context acting as `scope`'s owner in its namespace, for work no request carries (recovery, plan
 * control, budgets running out): it resolves back to `scope` in the task store.
 */
export function ownerCallContext(scope: StoreScope, user?: object): ServerCallContext {
  return new ServerCallContext({
    user: (user ?? { isAuthenticated: true, userName: scope.owner, defaultNamespace: scope.namespace }) as never,
    tenant: scope.namespace,
  });
}
