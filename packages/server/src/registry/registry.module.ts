import { Global, Module } from '@nestjs/common';
import { ModelEndpointGuard } from '../execution/model-endpoint.guard.js';
import { NamespaceBuiltins } from '../namespace/namespace.ports.js';
import { RegistryRepository } from './registry.repository.js';
import { RegistryRpc } from './registry.rpc.js';
import { RegistryService } from './registry.service.js';

/**
 * The registry (docs/protocol.md §6.2): versioned actor, tool, skill and profile definitions per namespace, and
 * NamespaceBuiltins, the built-ins a new namespace gets. Global, so that the namespace module can inject
 * NamespaceBuiltins without importing this module.
 */
@Global()
@Module({
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
