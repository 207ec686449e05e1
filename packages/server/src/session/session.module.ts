import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { ExecutionModule } from '../execution/execution.module.js';
import { RegistryModule } from '../registry/registry.module.js';
import { NamespaceUsageRepository } from './namespace-usage.repository.js';
import { NamespaceUsageRpc } from './namespace-usage.rpc.js';
import { NamespaceUsageService } from './namespace-usage.service.js';
import { SessionRpc } from './session.rpc.js';
import { SessionRepository } from './session.repository.js';
import { SessionService } from './session.service.js';

/**
 * Sessions (docs/protocol.md §6.4): an A2A context with its actor, profile and budget, the
 * `_cleveragents/session/*` methods and `namespace/usage`, which sums sessions. Turns (src/turn/) run in
 * them; this module knows nothing of turns.
 */
@Module({
  imports: [AuditModule, ExecutionModule, RegistryModule],
  providers: [
    SessionRepository,
    SessionService,
    SessionRpc,
    NamespaceUsageRepository,
    NamespaceUsageService,
    NamespaceUsageRpc,
  ],
  exports: [SessionService],
})
export class SessionModule {}
