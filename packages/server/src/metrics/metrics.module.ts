import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller.js';
import { MetricsService, RpcMetrics } from './metrics.service.js';

/** One registry per process; global so that any module can record into it. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [MetricsService, RpcMetrics],
  exports: [MetricsService, RpcMetrics],
})
export class MetricsModule {}
