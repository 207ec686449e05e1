import { randomBytes } from 'node:crypto';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditLog } from '../../audit/audit-log.service.js';
import type { Acting } from '../../common/actor.js';
import {
  AuthorizationError,
  BusinessRuleViolation,
  DuplicateEntityError,
  ResourceNotFoundError,
  ValidationError,
  type FieldViolation,
} from '../../common/domain.errors.js';
import { decodePageToken, pageOf, pageSizeOf, type Page, type PageRequest } from '../../common/paging.js';
import type { ApiKeyStatus, ApiKeyView, CreatedApiKey } from '../../contract/methods/auth.js';
import { isNamespaceSlug, slugRule } from '../../common/namespace-slug.js';
import { IdentityCache, identityKey } from '../identity-cache.js';
import { ApiKeyVerifier, type ApiKeyIdentity } from '../identity.ports.js';
import { ROLES, roleSatisfies, type Role } from '../principal.js';
import {
  apiKeyPrefix,
  hashSecret,
  isApiKeyId,
  looksLikeApiKey,
  mintApiKey,
  parseApiKey,
  secretMatches,
} from './api-key.format.js';

/** Key names: what an operator recognises in a list (`ci-deploy`, `bootstrap`). */
export const API_KEY_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const API_KEY_NAME_RULE =
  'name must be 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or digit';
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

interface ApiKeyRow {
  id: string;
  name: string;
  namespace: string;
  role: Role;
  secret_hash: string;
  created_by: string;
  created_at: Date | string;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
  revoked_by: string | null;
  last_used_at: Date | string | null;
  revision: number;
}

const VIEW_COLUMNS = `id, name, namespace, role, created_by, created_at, expires_at, revoked_at, revoked_by,
  last_used_at, revision`;

/**
 * API keys (SPEC.md §6.6, §8): minted into a namespace with a role no stronger than the creator's,
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
    private readonly audit: AuditLog,
    private readonly cache: IdentityCache,
  ) {}

  looksLikeKey(presented: string): boolean {
    return looksLikeApiKey(presented);
  }

  async verify(presented: string): Promise<ApiKeyIdentity | undefined> {
    const parsed = parseApiKey(presented);
    if (!parsed) return undefined;
    // Known keys come from memory: a revocation anywhere reaches the cache through the database's notification.
    const row = await this.cache.get(
      identityKey.apiKey(parsed.id),
      async () => {
        const rows: ApiKeyRow[] = await this.dataSource.query(
          `SELECT ${VIEW_COLUMNS}, secret_hash FROM api_keys WHERE id = $1`,
          [parsed.id],
        );
        return rows[0];
      },
      (found) => found !== undefined,
      { rememberAbsent: true },
    );
    // The same hash and constant-time comparison whether the id exists or not: neither time nor work tells.
    const matches = this.compareSecret(parsed.secret, row?.secret_hash ?? ABSENT_SECRET_HASH);
    if (!row || !matches) return undefined;
    if (statusOf(row) !== 'active') return undefined;
    this.touch(row);
    return {
      keyId: row.id,
      name: row.name,
      namespace: row.namespace,
      role: row.role,
      createdBy: row.created_by,
      expiresAt: row.expires_at === null ? undefined : new Date(row.expires_at),
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
      throw new AuthorizationError(
        `A key with the ${input.role} role needs that role in namespace ${input.namespace}; the caller holds ${held ?? 'none'}`,
        'ROLE_ESCALATION',
        { namespace: input.namespace, requestedRole: input.role, heldRole: held ?? '' },
      );
    }
    const expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt);
    return this.dataSource.transaction((manager) => insertApiKey(manager, this.audit, { ...input, expiresAt }, by));
  }

  /** A namespace's keys, newest first; revoked ones only when asked for. */
  async list(query: ListApiKeysQuery): Promise<Page<ApiKeyView>> {
    if (!isNamespaceSlug(query.namespace))
      throw new ValidationError([{ field: 'namespace', description: slugRule('namespace') }]);
    const pageSize = pageSizeOf(query);
    const cursor = decodePageToken(PAGE_LIST, query.pageToken, 1);
    const filter = query.includeRevoked ? 'namespace = $1' : 'namespace = $1 AND revoked_at IS NULL';
    const counted: { total: string }[] = await this.dataSource.query(
      `SELECT count(*) AS total FROM api_keys WHERE ${filter}`,
      [query.namespace],
    );
    const values: unknown[] = [query.namespace];
    let where = filter;
    if (cursor) {
      values.push(cursor[0]);
      where += ` AND id < $${values.length}`;
    }
    values.push(pageSize + 1);
    const rows: ApiKeyRow[] = await this.dataSource.query(
      `SELECT ${VIEW_COLUMNS} FROM api_keys WHERE ${where} ORDER BY id DESC LIMIT $${values.length}`,
      values,
    );
    return pageOf(rows, pageSize, Number(counted[0]?.total ?? 0), PAGE_LIST, (row) => [row.id], toView);
  }

  /** Revokes a key of `namespace` (an owner's key only by an owner); it fails verification from the next request on. */
  async revoke(input: { namespace: string; id: string }, by: Acting): Promise<ApiKeyView> {
    const id = input.id.toUpperCase();
    const notFound = () =>
      new ResourceNotFoundError(`No API key ${input.id} in namespace ${input.namespace}`, 'KEY_NOT_FOUND', {
        namespace: input.namespace,
        id: input.id,
      });
    if (!isApiKeyId(id)) throw notFound();
    return this.dataSource.transaction(async (manager) => {
      const rows: ApiKeyRow[] = await manager.query(
        `SELECT ${VIEW_COLUMNS} FROM api_keys WHERE id = $1 AND namespace = $2 FOR UPDATE`,
        [id, input.namespace],
      );
      const current = rows[0];
      if (!current) throw notFound();
      // The membership rule: only an owner touches an owner.
      if (current.role === 'owner' && by.actor.roleIn(input.namespace) !== 'owner') {
        throw new AuthorizationError(
          `Only an owner of namespace ${input.namespace} may revoke an owner's API key`,
          'OWNER_REQUIRED',
          { namespace: input.namespace, requiredRole: 'owner' },
        );
      }
      if (current.revoked_at !== null) {
        throw new BusinessRuleViolation(`API key ${id} is already revoked`, 'ALREADY_REVOKED', {
          id,
          revokedAt: iso(current.revoked_at),
        });
      }
      const updated: ApiKeyRow[] = await manager.query(
        `WITH revoked AS (
           UPDATE api_keys SET revoked_at = now(), revoked_by = $2, revision = revision + 1 WHERE id = $1
           RETURNING ${VIEW_COLUMNS})
         SELECT * FROM revoked`,
        [id, by.actor.subject],
      );
      await this.audit.record(manager, {
        namespace: input.namespace,
        actor: by.actor.subject,
        action: 'apikey.revoke',
        target: id,
        details: { name: current.name, role: current.role },
        requestId: by.requestId,
      });
      return toView(updated[0]);
    });
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
  private touch(row: ApiKeyRow): void {
    const now = Date.now();
    const lastHere = this.touched.get(row.id);
    const lastStored = row.last_used_at === null ? undefined : new Date(row.last_used_at).getTime();
    if (Math.max(lastHere ?? 0, lastStored ?? 0) > now - TOUCH_INTERVAL_MS) return;
    if (this.touched.size >= TOUCH_MEMORY_LIMIT) this.touched.clear();
    this.touched.set(row.id, now);
    const write: Promise<void> = this.dataSource
      .query(
        `UPDATE api_keys SET last_used_at = now()
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
        [row.id],
      )
      .then(
        () => undefined,
        (error: unknown) =>
          this.logger.warn({ msg: 'recording API key use failed', keyId: row.id, error: (error as Error).message }),
      )
      .finally(() => this.pendingTouches.delete(write));
    this.pendingTouches.add(write);
  }
}

/**
 * Inserts a key through `manager` (inside the caller's transaction) and audits it. The checks that
 * depend on the caller (its role) are the caller's; this checks the namespace and the name.
 */
export async function insertApiKey(
  manager: EntityManager,
  audit: AuditLog,
  input: { namespace: string; name: string; role: Role; expiresAt: Date | null },
  by: Acting,
): Promise<CreatedApiKey> {
  const namespaces: unknown[] = await manager.query('SELECT slug FROM namespaces WHERE slug = $1 FOR SHARE', [
    input.namespace,
  ]);
  if (namespaces.length === 0) {
    throw new ResourceNotFoundError(`Namespace ${input.namespace} does not exist`, 'NAMESPACE_NOT_FOUND', {
      namespace: input.namespace,
    });
  }
  const minted = mintApiKey();
  const inserted: ApiKeyRow[] = await manager.query(
    `INSERT INTO api_keys (id, name, namespace, role, secret_hash, created_by, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (namespace, name) WHERE revoked_at IS NULL DO NOTHING
     RETURNING ${VIEW_COLUMNS}`,
    [minted.id, input.name, input.namespace, input.role, minted.secretHash, by.actor.subject, input.expiresAt],
  );
  const row = inserted[0];
  if (!row) {
    throw new DuplicateEntityError(
      `Namespace ${input.namespace} already has an unrevoked API key named ${input.name}`,
      'KEY_NAME_TAKEN',
      { namespace: input.namespace, name: input.name },
    );
  }
  await audit.record(manager, {
    namespace: input.namespace,
    actor: by.actor.subject,
    action: 'apikey.create',
    target: row.id,
    details: { name: row.name, role: row.role, expiresAt: row.expires_at === null ? null : iso(row.expires_at) },
    requestId: by.requestId,
  });
  return {
    key: minted.key,
    id: row.id,
    name: row.name,
    namespace: row.namespace,
    role: row.role,
    createdAt: iso(row.created_at),
    expiresAt: row.expires_at === null ? null : iso(row.expires_at),
  };
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

function statusOf(row: Pick<ApiKeyRow, 'revoked_at' | 'expires_at'>, now: number = Date.now()): ApiKeyStatus {
  if (row.revoked_at !== null) return 'revoked';
  if (row.expires_at !== null && new Date(row.expires_at).getTime() <= now) return 'expired';
  return 'active';
}

function iso(value: Date | string): string {
  return new Date(value).toISOString();
}

function isoOrNull(value: Date | string | null): string | null {
  return value === null ? null : iso(value);
}

function toView(row: ApiKeyRow): ApiKeyView {
  return {
    id: row.id,
    prefix: apiKeyPrefix(row.id),
    name: row.name,
    namespace: row.namespace,
    role: row.role,
    status: statusOf(row),
    createdBy: row.created_by,
    createdAt: iso(row.created_at),
    expiresAt: isoOrNull(row.expires_at),
    revokedAt: isoOrNull(row.revoked_at),
    revokedBy: row.revoked_by,
    lastUsedAt: isoOrNull(row.last_used_at),
    revision: row.revision,
  };
}
