import { Inject, Injectable, Optional } from '@nestjs/common';
import { IdentityCache } from '../auth/identity-cache.js';
import { JwksKeySource } from '../auth/oidc/jwks-key-source.js';
import { AppConfig } from '../config/app.config.js';
import { ActorBackends } from '../execution/actor-backends.js';
import { DatabaseHealth } from '../database/database.health.js';
import { SERVER_NAME, SERVER_VERSION } from '../common/server-info.js';
import { A2A_VERSIONS, EXTENSION_URI, EXTENSION_VERSION, SUPPORTED_EXTENSION_VERSIONS } from '@cleveragents/contract';
import type { HealthReport, ServerInfo } from '@cleveragents/contract';

/** What `_cleveragents/diagnostics/health` and `info` answer: the contract's. */
export type { HealthReport, ServerInfo };

/** The checks of a health report that can fail (the credential cache only informs). */
export const READINESS_CHECKS = ['database', 'actorBackend', 'identityProvider'] as const;
export type ReadinessCheck = (typeof READINESS_CHECKS)[number];

/**
 * The checks of `checks` that failed, of those not `excluded`: the one verdict behind the report's
 * `status` and /readyz's status code.
 */
export function failingChecks(
  checks: HealthReport['checks'],
  excluded: ReadonlySet<ReadinessCheck> = new Set(),
): ReadinessCheck[] {
  return READINESS_CHECKS.filter((name) => !excluded.has(name) && checks[name]?.ok === false);
}

/** Health and version facts, cheap enough for a load balancer (docs/protocol.md §6.7). */
@Injectable()
export class DiagnosticsService {
  private readonly startedAt = Date.now();

  constructor(
    private readonly database: DatabaseHealth,
    private readonly actorBackend: ActorBackends,
    private readonly config: AppConfig,
    private readonly identityCache: IdentityCache,
    @Optional() @Inject(JwksKeySource) private readonly jwks?: JwksKeySource,
  ) {}

  async health(): Promise<HealthReport> {
    const started = performance.now();
    let database: HealthReport['checks']['database'];
    try {
      await this.database.ping();
      const latencyMs = Math.round((performance.now() - started) * 10) / 10;
      const problem = await this.database.writeProblem();
      database = problem
        ? { ok: false, latencyMs, reason: 'STORAGE_UNAVAILABLE', detail: problem }
        : { ok: true, latencyMs };
    } catch (err) {
      database = {
        ok: false,
        latencyMs: Math.round(performance.now() - started),
        reason: 'DATABASE_UNAVAILABLE',
        detail: (err as Error).message,
      };
    }
    const readiness = await this.actorBackend.check();
    const actorBackend = { ok: readiness.ready, name: this.actorBackend.name, detail: readiness.detail };
    const identityProvider = this.jwks ? identityProviderCheck(this.jwks) : undefined;
    const credentialCache = this.credentialCacheCheck();
    const checks: HealthReport['checks'] = {
      database,
      actorBackend,
      ...(identityProvider ? { identityProvider } : {}),
      ...(credentialCache ? { credentialCache } : {}),
    };
    return { status: failingChecks(checks).length === 0 ? 'ok' : 'degraded', checks };
  }

  private credentialCacheCheck(): HealthReport['checks']['credentialCache'] {
    const stats = this.identityCache.stats();
    if (!stats.enabled || this.config.authSchemes.every((scheme) => scheme === 'none')) return undefined;
    return {
      live: stats.live,
      entries: stats.size,
      hits: stats.hits,
      misses: stats.misses,
      ...(stats.live ? {} : { detail: 'not receiving change notifications: credentials are read from the database' }),
    };
  }

  async info(): Promise<ServerInfo> {
    const db = await this.database.describe();
    return {
      server: {
        name: SERVER_NAME,
        version: SERVER_VERSION,
        node: process.version,
        uptimeSeconds: Math.round((Date.now() - this.startedAt) / 1000),
      },
      a2a: { versions: [...A2A_VERSIONS] },
      extension: {
        uri: EXTENSION_URI,
        version: EXTENSION_VERSION,
        supportedVersions: [...SUPPORTED_EXTENSION_VERSIONS],
      },
      actorBackend: this.actorBackend.name,
      database: db,
    };
  }
}

function identityProviderCheck(jwks: JwksKeySource): NonNullable<HealthReport['checks']['identityProvider']> {
  const r = jwks.readiness();
  return {
    ok: r.ready,
    keyCount: r.keyCount,
    ...(r.loadedAt ? { loadedAt: r.loadedAt.toISOString() } : {}),
    ...(r.lastError ? { detail: r.lastError } : r.ready ? {} : { detail: 'signing keys not loaded yet' }),
  };
}
