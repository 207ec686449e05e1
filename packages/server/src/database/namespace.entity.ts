import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { RevisedColumns } from './revised-columns.js';

/**
 * A namespace: the tenancy boundary (docs/protocol.md §6.1). The slug is the key, hierarchical (`acme/platform`)
 * with `parent` naming the level above; a parent cannot be deleted while a child exists. The "C"
 * collation makes ordering bytewise (stable keyset paging) and lets `slug LIKE 'acme/%'` use the
 * primary key index to find descendants.
 *
 * The namespace folder owns the rows (NamespaceRepository, NamespaceService) and declares the table
 * (namespace.entities.ts); the class sits here, below the folders whose tables reference it by foreign
 * key (namespace members, API keys, the registry), so that auth/ can reference it without importing
 * namespace/, which builds on auth/.
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
