import { RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { METHODS } from '@cleveragents/contract';
import type { HealthReport, ServerInfo } from '@cleveragents/contract';
import { DiagnosticsService } from './diagnostics.service.js';

/** `_cleveragents/diagnostics/*` handlers. */
@RpcHandlers()
export class DiagnosticsRpc {
  constructor(private readonly diagnostics: DiagnosticsService) {}

  @RpcMethod(METHODS.diagnostics.health, {
    role: 'authenticated',
    errors: [],
    description: 'Database and actor-backend health of this server',
  })
  health(): Promise<HealthReport> {
    return this.diagnostics.health();
  }

  @RpcMethod(METHODS.diagnostics.info, {
    role: 'authenticated',
    errors: [],
    description: 'Versions (server, A2A, extension), actor backend and database kind',
  })
  info(): Promise<ServerInfo> {
    return this.diagnostics.info();
  }
}
