import { Column, CreateDateColumn, Entity, Generated, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { ApprovalWebhookDelivery } from '@cleveragents/contract';
import { NamespaceEntity } from '../database/namespace.entity.js';

/**
 * Where a namespace's new approvals are posted (docs/plans.md#approval-webhooks). The URL and the signing
 * secret are sealed together in `secrets` (SecretBox, bound to the webhook's namespace and id); `origin` (the
 * URL's scheme, host and port) is what lists show. The webhooks go with their namespace.
 */
@Entity({ name: 'approval_webhooks' })
@Index('IDX_approval_webhooks_namespace', ['namespace', 'createdSeq'])
export class ApprovalWebhookEntity {
  /** A ULID. */
  @PrimaryColumn({ type: 'text', collation: 'C', primaryKeyConstraintName: 'PK_approval_webhooks' })
  id: string;

  @Column({ type: 'text', collation: 'C' })
  namespace: string;

  @ManyToOne(() => NamespaceEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({
    name: 'namespace',
    referencedColumnName: 'slug',
    foreignKeyConstraintName: 'FK_approval_webhooks_namespace',
  })
  namespaceEntity?: NamespaceEntity;

  @Column({ type: 'text' })
  origin: string;

  /** Sealed JSON `{ url, secret }`. */
  @Column({ type: 'text' })
  secrets: string;

  @Column({ name: 'created_by', type: 'text' })
  createdBy: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** How the last delivery went, null before the first. */
  @Column({ name: 'last_delivery', type: 'jsonb', nullable: true })
  lastDelivery: ApprovalWebhookDelivery | null;

  /** Registration order: lists and deliveries follow it. */
  @Column({ name: 'created_seq', type: 'bigint' })
  @Generated('increment')
  createdSeq: string;
}
