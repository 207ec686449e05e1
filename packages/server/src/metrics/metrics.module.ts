import { Global, Module } from '@nestjs/common';
import { metricExportReaders } from '../telemetry/metric-readers.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsService, RpcMetrics } from './metrics.service.js';
import { OutboundMetrics } from './outbound-metrics.js';

/** One meter provider per application; global so that any module can record into it. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [
    { provide: MetricsService, useFactory: async () => new MetricsService(await metricExportReaders(process.env)) },
    RpcMetrics,
    OutboundMetrics,
  ],
  exports: [MetricsService, RpcMetrics, OutboundMetrics],
})
export class MetricsModule {}
