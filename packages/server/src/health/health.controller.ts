import { Controller, Get, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import {
  DiagnosticsService,
  failingChecks,
  READINESS_CHECKS,
  type ReadinessCheck,
} from '../diagnostics/diagnostics.service.js';

/** Operational probes for the infrastructure (docs/protocol.md §2), not a client API. */
@Controller()
export class HealthController {
  constructor(private readonly diagnostics: DiagnosticsService) {}

  @Get('healthz')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * 200 when every check passes, else 503; the body is the whole report either way. `exclude` (repeatable,
   * as Kubernetes' own /readyz takes it) leaves checks out of the status code, not out of the report: a
   * cluster's readiness probe can leave out the model endpoint, whose outage every replica shares.
   */
  @Get('readyz')
  async ready(@Query('exclude') exclude: unknown, @Res() res: Response): Promise<void> {
    const excluded = excludedChecks(exclude);
    if (typeof excluded === 'string') {
      res.status(400).json({ error: excluded, field: 'exclude', allowed: READINESS_CHECKS });
      return;
    }
    const report = await this.diagnostics.health();
    res.status(failingChecks(report.checks, excluded).length === 0 ? 200 : 503).json(report);
  }
}

/** The `exclude` query as check names, or the problem with it. */
function excludedChecks(exclude: unknown): Set<ReadinessCheck> | string {
  const values = exclude === undefined ? [] : Array.isArray(exclude) ? (exclude as unknown[]) : [exclude];
  const names = values.flatMap((value) => (typeof value === 'string' ? value.split(',') : [value]));
  const unknown = names.filter((name) => !(READINESS_CHECKS as readonly unknown[]).includes(name));
  if (unknown.length > 0) {
    return `exclude names no check: ${unknown.map((n) => JSON.stringify(n)).join(', ')}; one of ${READINESS_CHECKS.join(', ')}`;
  }
  return new Set(names as ReadinessCheck[]);
}
