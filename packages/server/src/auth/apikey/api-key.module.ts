import { Global, Module } from '@nestjs/common';
import { AuditModule } from '../../audit/audit.module.js';
import { ApiKeyVerifier } from '../identity.ports.js';
import { ApiKeyRepository } from './api-key.repository.js';
import { ApiKeyRpc } from './api-key.rpc.js';
import { ApiKeyService } from './api-key.service.js';

/**
 * API keys (docs/protocol.md §6.6): the `auth/apikey/*` methods and the ApiKeyVerifier that authentication
 * uses. Global, so that the auth module can inject ApiKeyVerifier without importing this module.
 */
@Global()
@Module({
  imports: [AuditModule],
  providers: [ApiKeyRepository, ApiKeyService, ApiKeyRpc, { provide: ApiKeyVerifier, useExisting: ApiKeyService }],
  exports: [ApiKeyRepository, ApiKeyService, ApiKeyVerifier],
})
export class ApiKeyModule {}
