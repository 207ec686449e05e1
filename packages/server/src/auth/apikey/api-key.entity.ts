import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { Role } from '../../common/principal.js';
import { NamespaceEntity } from '../../database/namespace.entity.js';

/**
 * An API key (docs/protocol.md §6.6, §8): scoped to one namespace and role, stored as a hash, revocable,
 * optionally expiring. The key itself is `ca_<id>_<secret>`; only sha256(secret) is kept. A name is
 * unique among the namespace's keys that are not revoked. A namespace cannot be deleted while it holds
 * an unrevoked key; its revoked keys go with it (the audit log keeps their history).
 */
@Entity({ name: 'api_keys' })
@Check('CHK_api_keys_role', `"role" IN ('owner', 'admin', 'member', 'viewer')`)
@Index('UQ_api_keys_active_name', ['namespace', 'name'], { unique: true, where: '"revoked_at" IS NULL' })
// auth/apikey/list reads a namespace's keys newest first (ULIDs sort by creation time).
@Index('IDX_api_keys_namespace_id', ['namespace', 'id'])
export class ApiKeyEntity {
  /** A ULID, upper case; the key carries it lower case. */
  @PrimaryColumn({ type: 'text', collation: 'C', primaryKeyConstraintName: 'PK_api_keys' })
  id: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', collation: 'C' })
  namespace: string;

  @ManyToOne(() => NamespaceEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'namespace', referencedColumnName: 'slug', foreignKeyConstraintName: 'FK_api_keys_namespace' })
  namespaceEntity?: NamespaceEntity;

  @Column({ type: 'text' })
  role: Role;

  /** Hex sha256 of the secret part of the key. */
  @Column({ name: 'secret_hash', type: 'text' })
  secretHash: string;

  @Column({ name: 'created_by', type: 'text' })
  createdBy: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'revoked_by', type: 'text', nullable: true })
  revokedBy: string | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ type: 'int', default: 1 })
  revision: number;
}
