import { randomBytes } from 'node:crypto';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditLog } from '../../audit/audit-log.service.js';
import type { Acting } from '../../common/actor.js';
import { ValidationError, type FieldViolation } from '../../common/domain.errors.js';
import { decodePageToken, pageOf, pageSizeOf, type Page, type PageRequest } from '../../common/paging.js';
import {
  API_KEY_NAME_PATTERN,
  API_KEY_NAME_RULE,
  type ApiKeyStatus,
  type ApiKeyView,
  type CreatedApiKey,
} from '@cleveragents/contract';
import { isNamespaceSlug, slugRule } from '../../common/namespace-slug.js';
import { iso, isoOrNull } from '../../common/iso.js';
import { IdentityReads, identityKey } from '../identity-cache.js';
import { ApiKeyVerifier, type ApiKeyIdentity } from '../identity.ports.js';
import { ROLES, roleSatisfies, type Role } from '../../common/principal.js';
import {
  apiKeyPrefix,
  hashSecret,
  isApiKeyId,
  looksLikeApiKey,
  mintApiKey,
  parseApiKey,
  secretMatches,
} from './api-key.format.js';
import {
  apiKeyAlreadyRevoked,
  apiKeyNamespaceNotFound,
  apiKeyNameTaken,
  apiKeyNotFound,
  apiKeyRoleEscalation,
  ownerKeyNeedsOwner,
} from './api-key.errors.js';
import { ApiKeyRepository, type StoredApiKey } from './api-key.repository.js';

/** The least role that manages a namespace's keys (as `auth/apikey/*` declare it). */
const KEY_MANAGER_ROLE: Role = 'admin';
/** last_used_at is written at most this often per key. */
const TOUCH_INTERVAL_MS = 60_000;
const TOUCH_MEMORY_LIMIT = 10_000;
const PAGE_LIST = 'apikeys';
/** What an unknown id's secret is compared with: the hash of a secret nobody holds. */
const ABSENT_SECRET_HASH = hashSecret(randomBytes(32).toString('base64url'));

export interface CreateApiKeyInput {
  namespace: string;
  name: string;
  role: Role;
  /** An instant in the future; absent for a key that does not expire. */
  expiresAt?: Date | string;
}

/** What create returns (the only time the whole key is ever shown), and a key as lists show it: the contract's. */
export type { ApiKeyStatus, ApiKeyView, CreatedApiKey };

export interface ListApiKeysQuery extends PageRequest {
  namespace: string;
  includeRevoked?: boolean;
}

/**
 * API keys (docs/protocol.md §6.6, §8): minted into a namespace with a role no stronger than the creator's,
 * shown once, stored as a hash, listed without secrets, revoked with effect on the next request (the
 * cache of verified keys is told by the database). Also the ApiKeyVerifier the auth module authenticates with.
 */
@Injectable()
export class ApiKeyService implements ApiKeyVerifier, OnApplicationShutdown {
  private readonly logger = new Logger(ApiKeyService.name);
  /** Key id → when this process last wrote its last_used_at. */
  private readonly touched = new Map<string, number>();
  private readonly pendingTouches = new Set<Promise<void>>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly keys: ApiKeyRepository,
    private readonly audit: AuditLog,
    private readonly cache: IdentityReads,
  ) {}

  looksLikeKey(presented: string): boolean {
    return looksLikeApiKey(presented);
  }

  async verify(presented: string): Promise<ApiKeyIdentity | undefined> {
    const parsed = parseApiKey(presented);
    if (!parsed) return undefined;
    const key = identityKey.apiKey(parsed.id);
    const held = this.cache.held<StoredApiKey | undefined>(key);
    if (held) {
      const identity = this.check(parsed.secret, held.value);
      // The first refusal of a held id reads the row as an id first seen does: its time tells no stored id.
      if (!identity && this.cache.markRefused(key)) await this.keys.find(parsed.id);
      return identity;
    }
    // Known keys come from memory: a revocation anywhere reaches the cache through the database's notification.
    const row = await this.cache.get(
      key,
      () => this.keys.find(parsed.id),
      (found) => found !== undefined,
      {
        rememberAbsent: true,
      },
    );
    const identity = this.check(parsed.secret, row);
    // This read was the refusal's: the next refusal of the id costs none, as for any held id.
    if (!identity) this.cache.markRefused(key);
    return identity;
  }

  verifyHeld(presented: string): { identity: ApiKeyIdentity | undefined } | undefined {
    const parsed = parseApiKey(presented);
    if (!parsed) return { identity: undefined };
    const held = this.cache.held<StoredApiKey | undefined>(identityKey.apiKey(parsed.id));
    return held && { identity: this.check(parsed.secret, held.value) };
  }

  /** The presented secret against the key's record (undefined for an unknown id): its identity when valid. */
  private check(secret: string, row: StoredApiKey | undefined): ApiKeyIdentity | undefined {
    // The same hash and constant-time comparison whether the id exists or not: neither time nor work tells.
    const matches = this.compareSecret(secret, row?.secretHash ?? ABSENT_SECRET_HASH);
    if (!row || !matches) return undefined;
    if (statusOf(row) !== 'active') return undefined;
    this.touch(row);
    return {
      keyId: row.id,
      name: row.name,
      namespace: row.namespace,
      role: row.role,
      createdBy: row.createdBy,
      expiresAt: row.expiresAt === null ? undefined : new Date(row.expiresAt),
    };
  }

  /** The presented secret against a stored hash (a stand-in for an unknown id), in constant time. */
  protected compareSecret(secret: string, storedHash: string): boolean {
    return secretMatches(secret, storedHash);
  }

  /**
   * Mints a key. The actor may not mint a role stronger than its own in the namespace (-32003); a
   * name already used by an unrevoked key of the namespace is -32005.
   */
  async create(input: CreateApiKeyInput, by: Acting): Promise<CreatedApiKey> {
    const violations = createViolations(input);
    if (violations.length > 0) throw new ValidationError(violations);
    const held = by.actor.roleIn(input.namespace);
    if (!held || !roleSatisfies(held, input.role)) {
      throw apiKeyRoleEscalation(input.namespace, input.role, held);
    }
    const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt);
    return this.dataSource.transaction((manager) => this.insert(manager, { ...input, expiresAt }, by));
  }

  /** A namespace's keys, newest first; revoked ones only when asked for. */
  async list(query: ListApiKeysQuery): Promise<Page<ApiKeyView>> {
    if (!isNamespaceSlug(query.namespace)) {
      throw new ValidationError([{ field: 'namespace', description: slugRule('namespace') }]);
    }
    const pageSize = pageSizeOf(query);
    const cursor = decodePageToken(PAGE_LIST, query.pageToken, 1);
    const { rows, totalSize } = await this.keys.page(
      { namespace: query.namespace, includeRevoked: query.includeRevoked ?? false },
      cursor?.[0],
      pageSize,
    );
    return pageOf(rows, pageSize, totalSize, PAGE_LIST, (row) => [row.id], toView);
  }

  /**
   * Revokes a key (an owner's key only by an owner); it fails verification from the next request on.
   * With `namespace` the key must be in it (the dispatcher checked the caller's role there); without,
   * the key is found by its id and the caller must manage keys (admin) in its namespace: a key the
   * caller may not manage is answered as one that does not exist, so that ids cannot be probed.
   */
  async revoke(input: { namespace?: string; id: string }, by: Acting): Promise<ApiKeyView> {
    const id = input.id.toUpperCase();
    const notFound = () => apiKeyNotFound(input.namespace, input.id);
    if (!isApiKeyId(id)) throw notFound();
    return this.dataSource.transaction(async (manager) => {
      const current =
        input.namespace === undefined
          ? await this.keys.lock(manager, id)
          : await this.keys.lockInNamespace(manager, id, input.namespace);
      if (!current) throw notFound();
      const held = by.actor.roleIn(current.namespace);
      if (input.namespace === undefined && !(held && roleSatisfies(held, KEY_MANAGER_ROLE))) throw notFound();
      // The membership rule: only an owner touches an owner.
      if (current.role === 'owner' && held !== 'owner') {
        throw ownerKeyNeedsOwner(current.namespace);
      }
      if (current.revokedAt !== null) {
        throw apiKeyAlreadyRevoked(id, iso(current.revokedAt));
      }
      const updated = await this.keys.revoke(manager, id, by.actor.subject);
      await this.audit.record(manager, {
        namespace: current.namespace,
        actor: by.actor.subject,
        action: 'apikey.revoke',
        target: id,
        details: { name: current.name, role: current.role },
        requestId: by.requestId,
      });
      return toView(updated);
    });
  }

  /**
   * Inserts a key through `manager` (inside the caller's transaction) and audits it. The checks that
   * depend on the caller (its role) are the caller's; this checks the namespace and the name.
   */
  async insert(
    manager: EntityManager,
    input: { namespace: string; name: string; role: Role; expiresAt: Date | null },
    by: Acting,
  ): Promise<CreatedApiKey> {
    if (!(await this.keys.holdNamespace(manager, input.namespace))) {
      throw apiKeyNamespaceNotFound(input.namespace);
    }
    const minted = mintApiKey();
    const row = await this.keys.insertIfNameFree(manager, {
      id: minted.id,
      name: input.name,
      namespace: input.namespace,
      role: input.role,
      secretHash: minted.secretHash,
      createdBy: by.actor.subject,
      expiresAt: input.expiresAt,
    });
    if (!row) {
      throw apiKeyNameTaken(input.namespace, input.name);
    }
    await this.audit.record(manager, {
      namespace: input.namespace,
      actor: by.actor.subject,
      action: 'apikey.create',
      target: row.id,
      details: { name: row.name, role: row.role, expiresAt: isoOrNull(row.expiresAt) },
      requestId: by.requestId,
    });
    return {
      key: minted.key,
      id: row.id,
      name: row.name,
      namespace: row.namespace,
      role: row.role,
      createdAt: iso(row.createdAt),
      expiresAt: isoOrNull(row.expiresAt),
    };
  }

  /** Resolves once the last-used writes under way have finished. */
  async whenIdle(): Promise<void> {
    await Promise.allSettled([...this.pendingTouches]);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.whenIdle();
  }

  /**
   * Records use, at most once a minute per key (this process's memory, and the stored value for the
   * other replicas), without waiting: a failed write is logged, never the request's failure.
   */
  private touch(row: StoredApiKey): void {
    const now = Date.now();
    const lastHere = this.touched.get(row.id);
    // Written here within the interval: the commonest case, decided without parsing the stored instant.
    if (lastHere !== undefined && lastHere > now - TOUCH_INTERVAL_MS) return;
    const lastStored = row.lastUsedAt === null ? undefined : new Date(row.lastUsedAt).getTime();
    if (Math.max(lastHere ?? 0, lastStored ?? 0) > now - TOUCH_INTERVAL_MS) return;
    if (this.touched.size >= TOUCH_MEMORY_LIMIT) this.touched.clear();
    this.touched.set(row.id, now);
    const write: Promise<void> = this.keys
      .touch(row.id)
      .then(
        () => undefined,
        (error: unknown) =>
          this.logger.warn({ msg: 'recording API key use failed', keyId: row.id, error: (error as Error).message }),
      )
      .finally(() => this.pendingTouches.delete(write));
    this.pendingTouches.add(write);
  }
}

function createViolations(input: CreateApiKeyInput): FieldViolation[] {
  const violations: FieldViolation[] = [];
  if (!isNamespaceSlug(input.namespace)) violations.push({ field: 'namespace', description: slugRule('namespace') });
  if (typeof input.name !== 'string' || !API_KEY_NAME_PATTERN.test(input.name)) {
    violations.push({ field: 'name', description: API_KEY_NAME_RULE });
  }
  if (!(ROLES as readonly string[]).includes(input.role)) {
    violations.push({ field: 'role', description: `role must be one of ${ROLES.join(', ')}` });
  }
  if (input.expiresAt !== undefined) {
    const at = new Date(input.expiresAt).getTime();
    if (Number.isNaN(at)) violations.push({ field: 'expiresAt', description: 'expiresAt must be an ISO 8601 instant' });
    else if (at <= Date.now()) violations.push({ field: 'expiresAt', description: 'expiresAt must be in the future' });
  }
  return violations;
}

function statusOf(row: Pick<StoredApiKey, 'revokedAt' | 'expiresAt'>, now: number = Date.now()): ApiKeyStatus {
  if (row.revokedAt !== null) return 'revoked';
  if (row.expiresAt !== null && new Date(row.expiresAt).getTime() <= now) return 'expired';
  return 'active';
}

function toView(row: StoredApiKey): ApiKeyView {
  return {
    id: row.id,
    prefix: apiKeyPrefix(row.id),
    name: row.name,
    namespace: row.namespace,
    role: row.role,
    status: statusOf(row),
    createdBy: row.createdBy,
    createdAt: iso(row.createdAt),
    expiresAt: isoOrNull(row.expiresAt),
    revokedAt: isoOrNull(row.revokedAt),
    revokedBy: row.revokedBy,
    lastUsedAt: isoOrNull(row.lastUsedAt),
    revision: row.revision,
  };
}
