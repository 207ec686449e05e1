import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { entityColumns } from '../../database/entity-columns.js';
import { readKeysetPage } from '../../database/keyset-page.js';
import type { Role } from '../../common/principal.js';
import { ApiKeyEntity } from './api-key.entity.js';

/** An API key row, without its relation. */
export type StoredApiKey = Omit<ApiKeyEntity, 'namespaceEntity'>;

export interface NewApiKey {
  id: string;
  name: string;
  namespace: string;
  role: Role;
  secretHash: string;
  createdBy: string;
  expiresAt: Date | null;
}

/**
 * The `api_keys` table. Writes take the EntityManager of the caller's transaction; authentication's
 * lookup, the list and the last-used stamp go through the DataSource.
 */
@Injectable()
export class ApiKeyRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get columns(): string {
    return entityColumns(this.dataSource, ApiKeyEntity);
  }

  /** The key `id` (with its secret's hash), whatever its state. */
  async find(id: string): Promise<StoredApiKey | undefined> {
    const rows: StoredApiKey[] = await this.dataSource.query(`SELECT ${this.columns} FROM api_keys WHERE id = $1`, [
      id,
    ]);
    return rows[0];
  }

  /** Holds `namespace` against deletion until the transaction ends (FOR SHARE); false when it does not exist. */
  async holdNamespace(manager: EntityManager, namespace: string): Promise<boolean> {
    const rows: unknown[] = await manager.query('SELECT slug FROM namespaces WHERE slug = $1 FOR SHARE', [namespace]);
    return rows.length > 0;
  }

  /** Inserts `key`, or nothing (undefined) when an unrevoked key of its namespace has its name. */
  async insertIfNameFree(manager: EntityManager, key: NewApiKey): Promise<StoredApiKey | undefined> {
    const rows: StoredApiKey[] = await manager.query(
      `INSERT INTO api_keys (id, name, namespace, role, secret_hash, created_by, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (namespace, name) WHERE revoked_at IS NULL DO NOTHING
       RETURNING ${this.columns}`,
      [key.id, key.name, key.namespace, key.role, key.secretHash, key.createdBy, key.expiresAt],
    );
    return rows[0];
  }

  /** The key `id`, whatever its namespace, locked FOR UPDATE until the transaction ends. */
  async lock(manager: EntityManager, id: string): Promise<StoredApiKey | undefined> {
    const rows: StoredApiKey[] = await manager.query(`SELECT ${this.columns} FROM api_keys WHERE id = $1 FOR UPDATE`, [
      id,
    ]);
    return rows[0];
  }

  /** The key `id` of `namespace`, locked FOR UPDATE until the transaction ends. */
  async lockInNamespace(manager: EntityManager, id: string, namespace: string): Promise<StoredApiKey | undefined> {
    const rows: StoredApiKey[] = await manager.query(
      `SELECT ${this.columns} FROM api_keys WHERE id = $1 AND namespace = $2 FOR UPDATE`,
      [id, namespace],
    );
    return rows[0];
  }

  /** Revokes the key now, by `subject`, at the next revision. Call with the row locked. */
  async revoke(manager: EntityManager, id: string, subject: string): Promise<StoredApiKey> {
    const rows: StoredApiKey[] = await manager.query(
      `WITH revoked AS (
         UPDATE api_keys SET revoked_at = now(), revoked_by = $2, revision = revision + 1 WHERE id = $1
         RETURNING ${this.columns})
       SELECT * FROM revoked`,
      [id, subject],
    );
    return rows[0];
  }

  /** `pageSize + 1` keys of `namespace`, newest (greatest id) first after `beforeId`, and how many there are. */
  async page(
    filter: { namespace: string; includeRevoked: boolean },
    beforeId: string | undefined,
    pageSize: number,
  ): Promise<{ rows: StoredApiKey[]; totalSize: number }> {
    return readKeysetPage<StoredApiKey>(this.dataSource, {
      columns: this.columns,
      from: 'api_keys',
      where: [['namespace = $?', filter.namespace], filter.includeRevoked ? undefined : ['revoked_at IS NULL']],
      after: beforeId === undefined ? undefined : ['id < $?', beforeId],
      orderBy: 'id DESC',
      pageSize,
    });
  }

  /** Stamps the key's last use now, unless it was stamped within the last minute. */
  async touch(id: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE api_keys SET last_used_at = now()
       WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [id],
    );
  }

  /**
   * Whether the database ever held a key: a row of any state, or the audit record of one created (a
   * revoked key may have gone with its namespace).
   */
  async anyEverCreated(manager: EntityManager): Promise<boolean> {
    const [{ any }]: { any: boolean }[] = await manager.query(
      `SELECT EXISTS (SELECT 1 FROM api_keys) OR EXISTS (SELECT 1 FROM audit_log WHERE action = 'apikey.create') AS "any"`,
    );
    return any;
  }
}
