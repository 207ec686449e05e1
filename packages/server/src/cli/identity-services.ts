import type { DataSource } from 'typeorm';
import { AuditLogRepository } from '../audit/audit-log.repository.js';
import { AuditLog } from '../audit/audit-log.service.js';
import { ApiKeyRepository } from '../auth/apikey/api-key.repository.js';
import { ApiKeyService } from '../auth/apikey/api-key.service.js';
import { UncachedIdentityReads } from '../auth/identity-cache.js';
import type { AppConfig } from '../config/app.config.js';
import { BootstrapService } from '../namespace/bootstrap.service.js';
import { NamespaceMemberRepository } from '../namespace/namespace-member.repository.js';
import { NamespaceMembersService } from '../namespace/namespace-members.service.js';
import { NamespaceMembershipDirectory } from '../namespace/namespace-membership.directory.js';
import { NamespaceRepository } from '../namespace/namespace.repository.js';
import { NamespaceService } from '../namespace/namespace.service.js';
import { RegistryRepository } from '../registry/registry.repository.js';

/** The repositories of the identity domains, on one DataSource. */
export interface IdentityRepositories {
  audit: AuditLogRepository;
  namespaces: NamespaceRepository;
  members: NamespaceMemberRepository;
  apiKeys: ApiKeyRepository;
  registry: RegistryRepository;
}

/** The identity services (namespaces, members, API keys, bootstrap, audit) without Nest. */
export interface IdentityServices {
  repositories: IdentityRepositories;
  audit: AuditLog;
  namespaces: NamespaceService;
  members: NamespaceMembersService;
  apiKeys: ApiKeyService;
  bootstrap: BootstrapService;
  directory: NamespaceMembershipDirectory;
}

/**
 * The identity services wired on `dataSource` as their Nest modules wire them, for one-shot users that
 * must not start those modules (their start-up work migrates and mints): the admin CLI. Nothing is
 * cached (UncachedIdentityReads): such a process hears no identity notifications.
 */
export function identityServices(dataSource: DataSource, config: AppConfig): IdentityServices {
  const repositories: IdentityRepositories = {
    audit: new AuditLogRepository(dataSource),
    namespaces: new NamespaceRepository(dataSource),
    members: new NamespaceMemberRepository(dataSource),
    apiKeys: new ApiKeyRepository(dataSource),
    registry: new RegistryRepository(dataSource),
  };
  const audit = new AuditLog(repositories.audit);
  const namespaces = new NamespaceService(
    dataSource,
    repositories.namespaces,
    repositories.members,
    repositories.registry,
    audit,
    config,
  );
  const apiKeys = new ApiKeyService(dataSource, repositories.apiKeys, audit, new UncachedIdentityReads());
  return {
    repositories,
    audit,
    namespaces,
    members: new NamespaceMembersService(dataSource, namespaces, repositories.members, audit),
    apiKeys,
    bootstrap: new BootstrapService(
      dataSource,
      repositories.namespaces,
      repositories.registry,
      apiKeys,
      repositories.apiKeys,
      audit,
      config,
    ),
    directory: new NamespaceMembershipDirectory(
      repositories.namespaces,
      repositories.members,
      new UncachedIdentityReads(),
    ),
  };
}
