import { Module } from '@nestjs/common';
import { RegistryModule } from '../registry/registry.module.js';
import { SyncRpc } from './sync.rpc.js';
import { SyncService } from './sync.service.js';

/** Offline-first sync of the registry (docs/protocol.md §6.3): pull, push and status over the change log. */
@Module({ imports: [RegistryModule], providers: [SyncService, SyncRpc] })
export class SyncModule {}
