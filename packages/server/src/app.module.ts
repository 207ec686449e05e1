import { Module, type DynamicModule } from '@nestjs/common';
import type { Clock } from './common/clock.js';
import type { AppConfig } from './config/app.config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { ENTITIES } from './entities.js';
import { AuthModule } from './auth/auth.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { A2aModule } from './a2a/a2a.module.js';
import { DiagnosticsModule } from './diagnostics/diagnostics.module.js';
import { HealthModule } from './health/health.module.js';
import { ConsoleModule } from './console/console.module.js';
import { AuditModule } from './audit/audit.module.js';
import { NamespaceModule } from './namespace/namespace.module.js';
import { ApiKeyModule } from './auth/apikey/api-key.module.js';
import { RegistryModule } from './registry/registry.module.js';
import { SyncModule } from './sync/sync.module.js';
import { SessionModule } from './session/session.module.js';
import { PlanModule } from './plan/plan.module.js';
import { ApprovalModule } from './approval/approval.module.js';

/**
 * The whole server. Domain modules register their `_cleveragents/*` handlers by decorator. A module whose
 * port a higher folder implements is handed that folder's module here, once (one instance per reference).
 */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, clock?: Clock): DynamicModule {
    const memberships = NamespaceModule.forRoot({ builtins: RegistryModule });
    const auth = AuthModule.forRoot(config, { memberships });
    const a2a = A2aModule.forRoot({ auth, memberships });
    const diagnostics = DiagnosticsModule.forRoot({ auth });
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config, clock),
        DatabaseModule.forRoot({ entities: ENTITIES }),
        MetricsModule,
        auth,
        a2a,
        diagnostics,
        HealthModule.forRoot({ diagnostics }),
        ConsoleModule.forRoot(config),
        AuditModule,
        memberships,
        ApiKeyModule,
        RegistryModule,
        SyncModule,
        SessionModule,
        PlanModule.forRoot({ taskControl: a2a }),
        ApprovalModule.forRoot({ taskControl: a2a }),
      ],
    };
  }
}
