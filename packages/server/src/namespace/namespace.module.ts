import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { ApiKeyModule } from '../auth/apikey/api-key.module.js';
import { IdentityModule } from '../auth/identity.module.js';
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
 * start-up bootstrap (default namespace, first API key). `builtins` is the module that provides
 * NamespaceBuiltins (the registry's, handed in by the composition root: this folder cannot import it).
 */
@Module({})
export class NamespaceModule {
  static forRoot(options: { builtins: Type | DynamicModule }): DynamicModule {
    return {
      module: NamespaceModule,
      imports: [AuditModule, IdentityModule, ApiKeyModule, options.builtins],
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
    };
  }
}
