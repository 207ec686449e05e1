import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DiagnosticsService } from '../diagnostics/diagnostics.service.js';

/** Operational probes for the infrastructure (docs/protocol.md §2), not a client API. */
@Controller()
export class HealthController {
  constructor(private readonly diagnostics: DiagnosticsService) {}

  @Get('healthz')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  async ready(@Res() res: Response): Promise<void> {
    const report = await this.diagnostics.health();
    res.status(report.status === 'ok' ? 200 : 503).json(report);
  }
}
