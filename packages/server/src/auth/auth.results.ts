import { API_KEY_STATUSES, type ApiKeyView, type CreatedApiKey, type Whoami } from '@cleveragents/contract';
import { roleSchema } from '../rpc/schemas/common.results.js';
import {
  array,
  instant,
  integer,
  nullable,
  object,
  oneOf,
  optional,
  page,
  string,
  type Schema,
} from '../rpc/schemas/json-schema.js';

/** The published shape of `_cleveragents/auth/*` results. */
export const whoamiSchema: Schema<Whoami> = object({
  subject: string(),
  displayName: string(),
  scheme: oneOf(['none', 'local', 'apiKey', 'oidc', 'oauth2', 'bearer'] as const),
  defaultNamespace: string(),
  defaultNamespaceRole: nullable(roleSchema),
  grants: array(object({ namespace: string(), role: roleSchema })),
  apiKeyId: optional(string()),
  expiresAt: optional(instant()),
});

export const createdApiKeySchema: Schema<CreatedApiKey> = object({
  key: string(),
  id: string(),
  name: string(),
  namespace: string(),
  role: roleSchema,
  createdAt: instant(),
  expiresAt: nullable(instant()),
});

export const apiKeySchema: Schema<ApiKeyView> = object({
  id: string(),
  prefix: string(),
  name: string(),
  namespace: string(),
  role: roleSchema,
  status: oneOf(API_KEY_STATUSES),
  createdBy: string(),
  createdAt: instant(),
  expiresAt: nullable(instant()),
  revokedAt: nullable(instant()),
  revokedBy: nullable(string()),
  lastUsedAt: nullable(instant()),
  revision: integer({ minimum: 1 }),
});

export const apiKeyPageSchema = page(apiKeySchema);
