import { Module } from '@nestjs/common';
import { IdentityCache, IdentityReads } from './identity-cache.js';

/**
 * The identity reads (IdentityReads, kept exact by the database's notifications) that authentication,
 * the API keys and the namespaces' MembershipDirectory all go through; one cache per application.
 */
@Module({
  providers: [IdentityCache, { provide: IdentityReads, useExisting: IdentityCache }],
  exports: [IdentityCache, IdentityReads],
})
export class IdentityModule {}
