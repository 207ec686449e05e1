import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { ExecutionModule } from '../execution/execution.module.js';
import { RegistryModule } from '../registry/registry.module.js';
import { SessionRpc } from './session.rpc.js';
import { SessionRepository } from './session.repository.js';
import { SessionService } from './session.service.js';

/**
 * Sessions (docs/protocol.md §6.4): an A2A context with its actor, profile and budget, and the
 * `_cleveragents/session/*` methods. Turns (src/turn/) run in them; this module knows nothing of turns.
 */
@Module({
  imports: [AuditModule, ExecutionModule, RegistryModule],
  providers: [SessionRepository, SessionService, SessionRpc],
  exports: [SessionService],
})
export class SessionModule {}
