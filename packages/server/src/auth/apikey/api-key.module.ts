import { Module } from '@nestjs/common';
import { AuditModule } from '../../audit/audit.module.js';
import { IdentityModule } from '../identity.module.js';
import { ApiKeyVerifier } from '../identity.ports.js';
import { ApiKeyRepository } from './api-key.repository.js';
import { ApiKeyRpc } from './api-key.rpc.js';
import { ApiKeyService } from './api-key.service.js';

/** API keys (docs/protocol.md §6.6): the `auth/apikey/*` methods and the ApiKeyVerifier that authentication uses. */
@Module({
  imports: [AuditModule, IdentityModule],
  providers: [ApiKeyRepository, ApiKeyService, ApiKeyRpc, { provide: ApiKeyVerifier, useExisting: ApiKeyService }],
  exports: [ApiKeyRepository, ApiKeyService, ApiKeyVerifier],
})
export class ApiKeyModule {}
