import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { NamespaceEntity } from '../database/namespace.entity.js';
import { RevisedColumns } from '../database/revised-columns.js';

/**
 * One registry definition (docs/protocol.md §6.2), unique by (namespace, kind, name). A deleted entry stays as
 * a tombstone (`deleted_at` set, `spec` null) so that its revisions keep counting up if the name is
 * used again: a client holding an old revision can never mistake the new entry for the one it knew.
 * `builtin` marks a definition installed with its namespace and not changed since. Goes with its namespace.
 */
@Entity({ name: 'registry_entries' })
@Check('CHK_registry_entries_kind', `"kind" IN ('actor', 'tool', 'skill', 'profile')`)
@Index('UQ_registry_entries_name', ['namespace', 'kind', 'name'], { unique: true })
export class RegistryEntryEntity extends RevisedColumns {
  /** A ULID, new each time the name is (re)created. */
  @PrimaryColumn({ type: 'text', collation: 'C', primaryKeyConstraintName: 'PK_registry_entries' })
  id: string;

  @Column({ type: 'text', collation: 'C' })
  namespace: string;

  @ManyToOne(() => NamespaceEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({
    name: 'namespace',
    referencedColumnName: 'slug',
    foreignKeyConstraintName: 'FK_registry_entries_namespace',
  })
  namespaceEntity?: NamespaceEntity;

  @Column({ type: 'text', collation: 'C' })
  kind: string;

  @Column({ type: 'text', collation: 'C' })
  name: string;

  /** The kind's spec as validated; null on a tombstone. */
  @Column({ type: 'jsonb', nullable: true })
  spec: Record<string, unknown> | null;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  labels: Record<string, string>;

  @Column({ type: 'boolean', default: false })
  builtin: boolean;

  @Column({ name: 'updated_by', type: 'text' })
  updatedBy: string;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;
}
