/** What several `_cleveragents/*` methods share: paging, namespaces and roles, budgets. */

/** Paging params of every list: `pageSize` 1–100 (default 50), `pageToken` from the previous page. */
export interface PageParams {
  pageSize?: number;
  /** The previous page's `nextPageToken`; absent or empty for the first page. */
  pageToken?: string;
}

/** One page of a list; `nextPageToken` is empty on the last page, as in A2A's ListTasks. */
export interface Page<T> {
  items: T[];
  nextPageToken: string;
  totalSize: number;
}

/** Where a call acts: a namespace slug (`acme/platform`); the caller's default namespace when absent. */
export interface NamespaceParam {
  namespace?: string;
}

/** Namespace roles, strongest first. */
export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** How a principal was established. */
export type PrincipalScheme = 'none' | 'local' | 'apiKey' | 'oidc' | 'oauth2' | 'bearer';

/** The limits of a session's or plan's work; each a positive whole number, all optional. */
export interface Budget {
  tokens?: number;
  toolCalls?: number;
  wallTimeSeconds?: number;
}

/** What a session's or plan's work has used so far, counted from what actually ran. */
export interface BudgetUsage {
  tokens: number;
  toolCalls: number;
  /** Time its tasks spent working or waiting for the client. */
  wallTimeMs: number;
}
