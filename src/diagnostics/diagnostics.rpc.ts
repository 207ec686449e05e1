import { RpcHandlers, RpcMethod } from '../a2a/rpc-method.decorator.js';
import { DiagnosticsService, type HealthReport } from './diagnostics.service.js';

/** `_cleveragents/diagnostics/*` handlers. */
@RpcHandlers()
export class DiagnosticsRpc {
  constructor(private readonly diagnostics: DiagnosticsService) {}

  @RpcMethod('_cleveragents/diagnostics/health', {
    role: 'authenticated',
    description: 'Database and actor-backend health of this server',
  })
  health(): Promise<HealthReport> {
    return this.diagnostics.health();
  }

  @RpcMethod('_cleveragents/diagnostics/info', {
    role: 'authenticated',
    description: 'Versions (server, A2A, extension), actor backend and database kind',
  })
  info(): Promise<Record<string, unknown>> {
    return this.diagnostics.info();
  }
}
