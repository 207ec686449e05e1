/** `_cleveragents/diagnostics/*`: this server's health and versions. */
import { z } from 'zod';
import { Instant } from './common.js';

/** `diagnostics/health`. */
export const HealthReport = z.object({
  status: z.enum(['ok', 'degraded']),
  checks: z.object({
    /**
     * `reason` when not ok: DATABASE_UNAVAILABLE (it does not answer), STORAGE_UNAVAILABLE (it answers
     * but cannot store data: disk full, read-only, failing), as a call would be answered.
     */
    database: z.object({
      ok: z.boolean(),
      latencyMs: z.number(),
      reason: z.enum(['DATABASE_UNAVAILABLE', 'STORAGE_UNAVAILABLE']).optional(),
      detail: z.string().optional(),
    }),
    actorBackend: z.object({ ok: z.boolean(), name: z.string(), detail: z.string() }),
    /** The SSO issuer's signing keys, when a JWT scheme is configured. */
    identityProvider: z
      .object({ ok: z.boolean(), keyCount: z.int(), loadedAt: Instant.optional(), detail: z.string().optional() })
      .optional(),
    /**
     * Verified credentials kept in memory (when authentication is on and the cache enabled). Not live:
     * the database's change notifications are not being received, so every request reads its
     * credentials from the database (correct, slower); it does not make the server degraded.
     */
    credentialCache: z
      .object({
        live: z.boolean(),
        entries: z.int(),
        hits: z.int(),
        misses: z.int(),
        detail: z.string().optional(),
      })
      .optional(),
  }),
});
export type HealthReport = z.infer<typeof HealthReport>;

/** The database a server runs on. */
export const DatabaseDescription = z.object({
  kind: z.enum(['postgres', 'embedded']),
  /** `server_version` as the server reports it; null while it could not be asked. */
  serverVersion: z.string().nullable(),
});
export type DatabaseDescription = z.infer<typeof DatabaseDescription>;

/** `diagnostics/info`. */
export const ServerInfo = z.object({
  server: z.object({ name: z.string(), version: z.string(), node: z.string(), uptimeSeconds: z.number() }),
  a2a: z.object({ versions: z.array(z.string()) }),
  extension: z.object({ uri: z.string(), version: z.string(), supportedVersions: z.array(z.string()) }),
  actorBackend: z.string(),
  database: DatabaseDescription,
});
export type ServerInfo = z.infer<typeof ServerInfo>;
