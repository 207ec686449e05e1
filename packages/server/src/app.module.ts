import { Module, type DynamicModule } from '@nestjs/common';
import type { Clock } from './common/clock.js';
import type { AppConfig } from './config/app.config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { ENTITIES } from './entities.js';
import { ExecutionModule } from './execution/execution.module.js';
import { AuthModule } from './auth/auth.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { A2aModule } from './a2a/a2a.module.js';
import { TaskControlModule } from './a2a/task-control.module.js';
import { DiagnosticsModule } from './diagnostics/diagnostics.module.js';
import { HealthModule } from './health/health.module.js';
import { AuditModule } from './audit/audit.module.js';
import { NamespaceModule } from './namespace/namespace.module.js';
import { ApiKeyModule } from './auth/apikey/api-key.module.js';
import { RegistryModule } from './registry/registry.module.js';
import { SyncModule } from './sync/sync.module.js';
import { SessionModule } from './session/session.module.js';
import { PlanModule } from './plan/plan.module.js';

/** The whole server. Domain modules register their `_cleveragents/*` handlers by decorator. */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, clock?: Clock): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config, clock),
        DatabaseModule.forRoot({ entities: ENTITIES }),
        ExecutionModule.forRoot(config),
        AuthModule.forRoot(config),
        MetricsModule,
        A2aModule,
        TaskControlModule,
        DiagnosticsModule,
        HealthModule,
        AuditModule,
        NamespaceModule,
        ApiKeyModule,
        RegistryModule,
        SyncModule,
        SessionModule,
        PlanModule,
      ],
    };
  }
}
