import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { ModelEndpointGuard } from '../execution/model-endpoint.guard.js';
import { NamespaceBuiltins } from '../namespace/namespace.ports.js';
import { RegistryRepository } from './registry.repository.js';
import { RegistryRpc } from './registry.rpc.js';
import { RegistryService } from './registry.service.js';

/**
 * The registry (docs/protocol.md §6.2): versioned actor, tool, skill and profile definitions per namespace, and
 * NamespaceBuiltins, the built-ins a new namespace gets (the composition root hands this module to NamespaceModule).
 */
@Module({
  imports: [AuditModule],
  providers: [
    RegistryRepository,
    RegistryService,
    RegistryRpc,
    ModelEndpointGuard,
    { provide: NamespaceBuiltins, useExisting: RegistryRepository },
  ],
  exports: [RegistryRepository, RegistryService, ModelEndpointGuard, NamespaceBuiltins],
})
export class RegistryModule {}
