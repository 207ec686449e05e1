import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { MetricsService } from './metrics.service.js';

/** `GET /metrics`: an operational probe in the Prometheus text format, not a client API. */
@Controller()
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get('metrics')
  async scrape(@Res() res: Response): Promise<void> {
    const body = await this.metrics.render();
    res
      .status(200)
      .setHeader('Content-Type', this.metrics.contentType)
      .setHeader('Cache-Control', 'no-store')
      .send(body);
  }
}
