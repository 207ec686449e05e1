import { Global, Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { MembershipDirectory } from '../auth/identity.ports.js';
import { BootstrapService } from './bootstrap.service.js';
import { NamespaceMemberRepository } from './namespace-member.repository.js';
import { NamespaceMembersService } from './namespace-members.service.js';
import { NamespaceMembershipDirectory } from './namespace-membership.directory.js';
import { NamespaceRepository } from './namespace.repository.js';
import { NamespaceRpc } from './namespace.rpc.js';
import { NamespaceService } from './namespace.service.js';

/**
 * Namespaces and members (docs/protocol.md §6.1), the MembershipDirectory that authentication reads, and the
 * start-up bootstrap (default namespace, first API key). Global, so that the auth module can inject
 * MembershipDirectory without importing this module. The built-in registry definitions a new namespace
 * gets come through NamespaceBuiltins, which the (global) registry module provides.
 */
@Global()
@Module({
  imports: [AuditModule],
  providers: [
    NamespaceRepository,
    NamespaceMemberRepository,
    NamespaceService,
    NamespaceMembersService,
    NamespaceRpc,
    NamespaceMembershipDirectory,
    { provide: MembershipDirectory, useExisting: NamespaceMembershipDirectory },
    BootstrapService,
  ],
  exports: [NamespaceService, NamespaceMembersService, MembershipDirectory],
})
export class NamespaceModule {}
