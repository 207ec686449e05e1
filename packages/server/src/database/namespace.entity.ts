import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { RevisedColumns } from './revised-columns.js';

/**
 * A namespace, the tenancy boundary (docs/protocol.md §6.1), keyed by its hierarchical slug ("C" collation);
 * it sits in database/ so that auth/ can reference it (docs/design-notes.md#the-namespaces-table).
 */
@Entity({ name: 'namespaces' })
@Check('CHK_namespaces_slug', `length("slug") <= 200 AND "slug" ~ '^[a-z0-9]+(-[a-z0-9]+)*(/[a-z0-9]+(-[a-z0-9]+)*)*$'`)
@Index('IDX_namespaces_parent', ['parent'])
export class NamespaceEntity extends RevisedColumns {
  @PrimaryColumn({ type: 'text', collation: 'C', primaryKeyConstraintName: 'PK_namespaces' })
  slug: string;

  @Column({ type: 'text', collation: 'C', nullable: true })
  parent: string | null;

  @ManyToOne(() => NamespaceEntity, { onDelete: 'RESTRICT', nullable: true })
  @JoinColumn({ name: 'parent', referencedColumnName: 'slug', foreignKeyConstraintName: 'FK_namespaces_parent' })
  parentNamespace?: NamespaceEntity | null;

  @Column({ name: 'display_name', type: 'text' })
  displayName: string;

  @Column({ type: 'text', default: '' })
  description: string;
}
