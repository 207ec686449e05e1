/** `_cleveragents/diagnostics/*`: this server's health and versions. */

/** `diagnostics/health`. */
export interface HealthReport {
  status: 'ok' | 'degraded';
  checks: {
    /**
     * `reason` when not ok: DATABASE_UNAVAILABLE (it does not answer), STORAGE_UNAVAILABLE (it answers
     * but cannot store data: disk full, read-only, failing), as a call would be answered.
     */
    database: {
      ok: boolean;
      latencyMs: number;
      reason?: 'DATABASE_UNAVAILABLE' | 'STORAGE_UNAVAILABLE';
      detail?: string;
    };
    actorBackend: { ok: boolean; name: string; detail: string };
    /** The SSO issuer's signing keys, when a JWT scheme is configured. */
    identityProvider?: { ok: boolean; keyCount: number; loadedAt?: string; detail?: string };
    /**
     * Verified credentials kept in memory (when authentication is on and the cache enabled). Not live:
     * the database's change notifications are not being received, so every request reads its
     * credentials from the database (correct, slower); it does not make the server degraded.
     */
    credentialCache?: { live: boolean; entries: number; hits: number; misses: number; detail?: string };
  };
}

/** The database a server runs on. */
export interface DatabaseDescription {
  kind: 'postgres' | 'embedded';
  /** `server_version` as the server reports it; null while it could not be asked. */
  serverVersion: string | null;
}

/** `diagnostics/info`. */
export interface ServerInfo {
  server: { name: string; version: string; node: string; uptimeSeconds: number };
  a2a: { versions: string[] };
  extension: { uri: string; version: string; supportedVersions: string[] };
  actorBackend: string;
  database: DatabaseDescription;
}
