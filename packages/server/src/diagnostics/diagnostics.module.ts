import { Module, type DynamicModule } from '@nestjs/common';
import { ExecutionModule } from '../execution/execution.module.js';
import { IdentityModule } from '../auth/identity.module.js';
import { DiagnosticsRpc } from './diagnostics.rpc.js';
import { DiagnosticsService } from './diagnostics.service.js';

/** `_cleveragents/diagnostics/*`; `auth` provides the issuer's keys, whose state the health report shows. */
@Module({})
export class DiagnosticsModule {
  static forRoot(options: { auth: DynamicModule }): DynamicModule {
    return {
      module: DiagnosticsModule,
      imports: [ExecutionModule, IdentityModule, options.auth],
      providers: [DiagnosticsService, DiagnosticsRpc],
      exports: [DiagnosticsService],
    };
  }
}
