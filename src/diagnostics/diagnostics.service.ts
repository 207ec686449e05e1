import { Injectable } from '@nestjs/common';
import { ActorBackend } from '../execution/actor-backend.js';
import { DatabaseHealth } from '../database/database.health.js';
import { SERVER_NAME, SERVER_VERSION } from '../common/server-info.js';
import {
  A2A_VERSIONS,
  EXTENSION_URI,
  EXTENSION_VERSION,
  SUPPORTED_EXTENSION_VERSIONS,
} from '../a2a/protocol-version.js';

export interface HealthReport {
  status: 'ok' | 'degraded';
  checks: {
    database: { ok: boolean; latencyMs: number; detail?: string };
    actorBackend: { ok: boolean; name: string; detail: string };
  };
}

/** Health and version facts, cheap enough for a load balancer (SPEC.md §6.7). */
@Injectable()
export class DiagnosticsService {
  private readonly startedAt = Date.now();

  constructor(
    private readonly database: DatabaseHealth,
    private readonly actorBackend: ActorBackend,
  ) {}

  async health(): Promise<HealthReport> {
    const started = performance.now();
    let database: HealthReport['checks']['database'];
    try {
      await this.database.ping();
      database = { ok: true, latencyMs: Math.round((performance.now() - started) * 10) / 10 };
    } catch (err) {
      database = { ok: false, latencyMs: Math.round(performance.now() - started), detail: (err as Error).message };
    }
    const readiness = this.actorBackend.readiness();
    const actorBackend = { ok: readiness.ready, name: this.actorBackend.name, detail: readiness.detail };
    return { status: database.ok && actorBackend.ok ? 'ok' : 'degraded', checks: { database, actorBackend } };
  }

  async info(): Promise<Record<string, unknown>> {
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
