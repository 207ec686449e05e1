/** `_cleveragents/auth/*`: who the caller is, and the API keys of a namespace. */
import { z } from 'zod';
import {
  ISO_8601_INSTANT,
  Instant,
  iso8601Instant,
  NamespaceParam,
  PageParams,
  PrincipalScheme,
  Revision,
  Role,
  page,
  type Page,
} from './common.js';

/** Key names: what an operator recognises in a list (`ci-deploy`, `bootstrap`). */
export const API_KEY_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const API_KEY_NAME_RULE =
  'name must be 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or digit';

/** An API key's id: a ULID, in either case. */
export const API_KEY_ID_PATTERN = /^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$/;

/** `auth/whoami`: who the server takes the caller for, and what it may do. */
export const Whoami = z.object({
  subject: z.string(),
  displayName: z.string(),
  scheme: PrincipalScheme,
  defaultNamespace: z.string(),
  /** The caller's role in its default namespace, or null for none. */
  defaultNamespaceRole: Role.nullable(),
  grants: z.array(z.object({ namespace: z.string(), role: Role })),
  /** For an API key: its id. */
  apiKeyId: z.string().optional(),
  /** When the credential stops being valid, if it does. */
  expiresAt: Instant.optional(),
});
export type Whoami = z.infer<typeof Whoami>;

/** `auth/apikey/create`; `null` for `expiresAt` is as if absent. */
export const CreateApiKeyParams = z.strictObject({
  ...NamespaceParam.shape,
  name: z.string({ error: API_KEY_NAME_RULE }).regex(API_KEY_NAME_PATTERN, { error: API_KEY_NAME_RULE }),
  /** No stronger than the caller's own role in the namespace. */
  role: Role,
  /** An ISO 8601 instant in the future (a bare date is midnight UTC); absent for a key that does not expire. */
  expiresAt: iso8601Instant('expiresAt must be an ISO 8601 instant such as 2030-01-31T00:00:00Z')
    .nullable()
    .optional()
    .meta({ description: ISO_8601_INSTANT }),
});
export type CreateApiKeyParams = z.infer<typeof CreateApiKeyParams>;

/** What `auth/apikey/create` answers: the only time the whole key is ever shown. */
export const CreatedApiKey = z.object({
  key: z.string(),
  id: z.string(),
  name: z.string(),
  namespace: z.string(),
  role: Role,
  createdAt: Instant,
  expiresAt: Instant.nullable(),
});
export type CreatedApiKey = z.infer<typeof CreatedApiKey>;

/** `auth/apikey/list`: newest first; `null` for any param is as if absent. */
export const ListApiKeysParams = PageParams.extend({
  ...NamespaceParam.shape,
  /** Also list revoked keys (expired ones are always listed). */
  includeRevoked: z.boolean().nullable().optional(),
});
export type ListApiKeysParams = z.infer<typeof ListApiKeysParams>;

export const API_KEY_STATUSES = ['active', 'expired', 'revoked'] as const;
export const ApiKeyStatus = z.enum(API_KEY_STATUSES);
export type ApiKeyStatus = z.infer<typeof ApiKeyStatus>;

/** A key as lists show it: never its secret nor its hash. */
export const ApiKeyView = z.object({
  id: z.string(),
  prefix: z.string(),
  name: z.string(),
  namespace: z.string(),
  role: Role,
  status: ApiKeyStatus,
  createdBy: z.string(),
  createdAt: Instant,
  expiresAt: Instant.nullable(),
  revokedAt: Instant.nullable(),
  revokedBy: z.string().nullable(),
  lastUsedAt: Instant.nullable(),
  revision: Revision,
});
export type ApiKeyView = z.infer<typeof ApiKeyView>;

/**
 * `auth/apikey/revoke`. Key ids are unique: without `namespace` the key is found by its id, and the caller
 * must manage keys in its namespace (a key it may not manage is not found, as an unknown id is).
 */
export const RevokeApiKeyParams = z.strictObject({
  ...NamespaceParam.shape,
  /** The key's id (a ULID, as list shows it). */
  id: z.string({ error: 'id must be an API key id (a ULID)' }).regex(API_KEY_ID_PATTERN, {
    error: 'id must be an API key id (a ULID)',
  }),
});
export type RevokeApiKeyParams = z.infer<typeof RevokeApiKeyParams>;

export const ApiKeyPage = page(ApiKeyView);
export type ApiKeyPage = Page<ApiKeyView>;
