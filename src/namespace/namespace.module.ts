import { Global, Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { MembershipDirectory } from '../auth/identity.ports.js';
import { BootstrapService } from './bootstrap.service.js';
import { NamespaceMembershipDirectory } from './namespace-membership.directory.js';
import { NamespaceRpc } from './namespace.rpc.js';
import { NamespaceService } from './namespace.service.js';

/**
 * Namespaces and members (SPEC.md §6.1), the MembershipDirectory that authentication reads, and the
 * start-up bootstrap (default namespace, first API key). Global, so that the auth module can inject
 * MembershipDirectory without importing this module.
 */
@Global()
@Module({
  imports: [AuditModule],
  providers: [
    NamespaceService,
    NamespaceRpc,
    NamespaceMembershipDirectory,
    { provide: MembershipDirectory, useExisting: NamespaceMembershipDirectory },
    BootstrapService,
  ],
  exports: [NamespaceService, MembershipDirectory],
})
export class NamespaceModule {}
