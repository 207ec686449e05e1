import { Module } from '@nestjs/common';
import { ModelEndpointGuard } from '../execution/model-endpoint.guard.js';
import { RegistryRepository } from './registry.repository.js';
import { RegistryRpc } from './registry.rpc.js';
import { RegistryService } from './registry.service.js';

/** The registry (SPEC.md §6.2): versioned actor, tool, skill and profile definitions per namespace. */
@Module({
  providers: [RegistryRepository, RegistryService, RegistryRpc, ModelEndpointGuard],
  exports: [RegistryRepository, RegistryService, ModelEndpointGuard],
})
export class RegistryModule {}
