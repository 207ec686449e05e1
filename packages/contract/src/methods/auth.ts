/** `_cleveragents/auth/*`: who the caller is, and the API keys of a namespace. */
import type { NamespaceParam, Page, PageParams, PrincipalScheme, Role } from './common.js';

/** `auth/whoami`: who the server takes the caller for, and what it may do. */
export interface Whoami {
  subject: string;
  displayName: string;
  scheme: PrincipalScheme;
  defaultNamespace: string;
  /** The caller's role in its default namespace, or null for none. */
  defaultNamespaceRole: Role | null;
  grants: { namespace: string; role: Role }[];
  /** For an API key: its id. */
  apiKeyId?: string;
  /** When the credential stops being valid, if it does. */
  expiresAt?: string;
}

/** `auth/apikey/create`. */
export interface CreateApiKeyParams extends NamespaceParam {
  name: string;
  /** No stronger than the caller's own role in the namespace. */
  role: Role;
  /** An ISO 8601 instant in the future; absent for a key that does not expire. */
  expiresAt?: string;
}

/** What `auth/apikey/create` answers: the only time the whole key is ever shown. */
export interface CreatedApiKey {
  key: string;
  id: string;
  name: string;
  namespace: string;
  role: Role;
  createdAt: string;
  expiresAt: string | null;
}

/** `auth/apikey/list`: newest first. */
export interface ListApiKeysParams extends NamespaceParam, PageParams {
  /** Also list revoked keys (expired ones are always listed). */
  includeRevoked?: boolean;
}

export const API_KEY_STATUSES = ['active', 'expired', 'revoked'] as const;
export type ApiKeyStatus = (typeof API_KEY_STATUSES)[number];

/** A key as lists show it: never its secret nor its hash. */
export interface ApiKeyView {
  id: string;
  prefix: string;
  name: string;
  namespace: string;
  role: Role;
  status: ApiKeyStatus;
  createdBy: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  revokedBy: string | null;
  lastUsedAt: string | null;
  revision: number;
}

/** `auth/apikey/revoke`. */
export interface RevokeApiKeyParams extends NamespaceParam {
  /** The key's id (a ULID, as list shows it). */
  id: string;
}

export type ApiKeyPage = Page<ApiKeyView>;
