import { Global, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { metricExportReaders } from '../telemetry/metric-readers.js';
import { stopTracing } from '../telemetry/start.js';
import { MetricsController } from './metrics.controller.js';
import { METRIC_EXPORT_READERS, MetricsService, RpcMetrics } from './metrics.service.js';

/** Exports the spans still buffered when the application stops (after its last call), if tracing is on. */
@Injectable()
export class TracingShutdown implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    await stopTracing();
  }
}

/** One meter provider per application; global so that any module can record into it. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [
    { provide: METRIC_EXPORT_READERS, useFactory: () => metricExportReaders(process.env) },
    MetricsService,
    RpcMetrics,
    TracingShutdown,
  ],
  exports: [MetricsService, RpcMetrics],
})
export class MetricsModule {}
