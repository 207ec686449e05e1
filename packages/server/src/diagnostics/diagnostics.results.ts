import type { HealthReport, ServerInfo } from '@cleveragents/contract';
import {
  array,
  boolean,
  instant,
  integer,
  nullable,
  number,
  object,
  oneOf,
  optional,
  string,
  type Schema,
} from '../rpc/schemas/json-schema.js';

/** The published shape of `_cleveragents/diagnostics/*` results. */
export const healthReportSchema: Schema<HealthReport> = object({
  status: oneOf(['ok', 'degraded'] as const),
  checks: object({
    database: object({
      ok: boolean(),
      latencyMs: number(),
      reason: optional(oneOf(['DATABASE_UNAVAILABLE', 'STORAGE_UNAVAILABLE'] as const)),
      detail: optional(string()),
    }),
    actorBackend: object({ ok: boolean(), name: string(), detail: string() }),
    identityProvider: optional(
      object({ ok: boolean(), keyCount: integer(), loadedAt: optional(instant()), detail: optional(string()) }),
    ),
    credentialCache: optional(
      object({
        live: boolean(),
        entries: integer(),
        hits: integer(),
        misses: integer(),
        detail: optional(string()),
      }),
    ),
  }),
});

export const serverInfoSchema: Schema<ServerInfo> = object({
  server: object({ name: string(), version: string(), node: string(), uptimeSeconds: number() }),
  a2a: object({ versions: array(string()) }),
  extension: object({ uri: string(), version: string(), supportedVersions: array(string()) }),
  actorBackend: string(),
  database: object({ kind: oneOf(['postgres', 'embedded'] as const), serverVersion: nullable(string()) }),
});
