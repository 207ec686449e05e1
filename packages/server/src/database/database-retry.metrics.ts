import { Injectable, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Counter } from '@opentelemetry/api';
import { MetricsService } from '../metrics/metrics.service.js';
import { observeDatabaseRetries } from './database-retry.js';

/**
 * Counts the statements retried while the database was away (docs/operations.md, "Metrics"), whether or not
 * a span was active: `cleveragents_db_retries` by operation (read, write) and error class (the errno or
 * SQLSTATE). Without the metrics module (a test's database alone) it counts nothing.
 */
@Injectable()
export class DatabaseRetryMetrics implements OnModuleInit, OnApplicationShutdown {
  private readonly retries: Counter | undefined;
  private stop: (() => void) | undefined;

  constructor(@Optional() metrics?: MetricsService) {
    this.retries = metrics?.meter.createCounter('cleveragents_db_retries', {
      description: 'Database statements retried because the database could not be reached, by operation and error',
    });
  }

  onModuleInit(): void {
    const retries = this.retries;
    if (!retries) return;
    this.stop = observeDatabaseRetries((retry) =>
      retries.add(1, { operation: retry.operation, error: retry.errorClass }),
    );
  }

  onApplicationShutdown(): void {
    this.stop?.();
    this.stop = undefined;
  }
}
