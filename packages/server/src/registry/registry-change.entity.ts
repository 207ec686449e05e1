import { Check, Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { NamespaceEntity } from '../database/namespace.entity.js';

/**
 * The per-namespace change log (docs/protocol.md §6.3): one row per registry mutation, written in its
 * transaction, `seq` 1, 2, 3… with no gap (see RegistrySequenceEntity). An upsert carries the entry
 * as it became (`entity`), a delete is a tombstone (`entity` null), so that a client replaying the log
 * from 0 ends with exactly the registry. Goes with its namespace.
 */
@Entity({ name: 'registry_changes' })
@Check('CHK_registry_changes_op', `"op" IN ('upsert', 'delete')`)
export class RegistryChangeEntity {
  @PrimaryColumn({ type: 'text', collation: 'C', primaryKeyConstraintName: 'PK_registry_changes' })
  namespace: string;

  @ManyToOne(() => NamespaceEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({
    name: 'namespace',
    referencedColumnName: 'slug',
    foreignKeyConstraintName: 'FK_registry_changes_namespace',
  })
  namespaceEntity?: NamespaceEntity;

  @PrimaryColumn({ type: 'bigint', primaryKeyConstraintName: 'PK_registry_changes' })
  seq: string;

  @Column({ type: 'text', collation: 'C' })
  kind: string;

  @Column({ type: 'text', collation: 'C' })
  name: string;

  @Column({ type: 'text' })
  op: string;

  /** The entry's revision after the change (a delete takes the next revision too). */
  @Column({ type: 'int' })
  revision: number;

  @Column({ type: 'jsonb', nullable: true })
  entity: Record<string, unknown> | null;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  at: Date;

  /** The subject that made the change. */
  @Column({ type: 'text' })
  actor: string;
}
