import { Column, Entity, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import { NamespaceEntity } from '../database/namespace.entity.js';

/**
 * The last change-log sequence of a namespace. A writer locks this row first and bumps it only when it
 * writes, inside its transaction: writers of one namespace take turns, a rollback leaves no gap, and
 * other namespaces are not held up (a global SEQUENCE would leave gaps). Its presence also says the
 * namespace's built-in definitions were installed once.
 */
@Entity({ name: 'registry_sequences' })
export class RegistrySequenceEntity {
  @PrimaryColumn({ type: 'text', collation: 'C', primaryKeyConstraintName: 'PK_registry_sequences' })
  namespace: string;

  @OneToOne(() => NamespaceEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({
    name: 'namespace',
    referencedColumnName: 'slug',
    foreignKeyConstraintName: 'FK_registry_sequences_namespace',
  })
  namespaceEntity?: NamespaceEntity;

  @Column({ name: 'last_seq', type: 'bigint', default: 0 })
  lastSeq: string;
}
