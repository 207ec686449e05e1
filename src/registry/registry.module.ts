import { Module } from '@nestjs/common';
import { RegistryRpc } from './registry.rpc.js';
import { RegistryService } from './registry.service.js';

/** The registry (SPEC.md §6.2): versioned actor, tool, skill and profile definitions per namespace. */
@Module({ providers: [RegistryService, RegistryRpc], exports: [RegistryService] })
export class RegistryModule {}
