import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { RevisedColumns } from '../database/revised-columns.js';
import type { Role } from '../common/principal.js';
import { NamespaceEntity } from '../database/namespace.entity.js';

/**
 * A subject's role in a namespace (docs/protocol.md §6.1). The role holds in every namespace below too (see
 * Principal.roleIn). Memberships go with their namespace. Authentication reads them by subject, once
 * per request, through IDX_namespace_members_subject.
 */
@Entity({ name: 'namespace_members' })
@Check('CHK_namespace_members_role', `"role" IN ('owner', 'admin', 'member', 'viewer')`)
@Index('IDX_namespace_members_subject', ['subject'])
export class NamespaceMemberEntity extends RevisedColumns {
  @PrimaryColumn({ type: 'text', collation: 'C', primaryKeyConstraintName: 'PK_namespace_members' })
  namespace: string;

  @ManyToOne(() => NamespaceEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({
    name: 'namespace',
    referencedColumnName: 'slug',
    foreignKeyConstraintName: 'FK_namespace_members_namespace',
  })
  namespaceEntity?: NamespaceEntity;

  /** As `auth/whoami` prints it: `oidc:alice`, `apikey:01J…`. */
  @PrimaryColumn({ type: 'text', collation: 'C', primaryKeyConstraintName: 'PK_namespace_members' })
  subject: string;

  @Column({ type: 'text' })
  role: Role;
}
