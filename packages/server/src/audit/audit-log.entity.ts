import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One audited change (docs/protocol.md §8): who did what to which target in which namespace. Written in the
 * transaction of the change it records, never updated. `namespace` is no foreign key: the history of
 * a deleted namespace stays. `details` never holds a secret.
 */
@Entity({ name: 'audit_log' })
// audit/list reads newest first within a namespace: the B-tree scanned backwards serves (at DESC, id DESC).
@Index('IDX_audit_log_namespace_recent', ['namespace', 'at', 'id'])
export class AuditLogEntity {
  /** A ULID. */
  @PrimaryColumn({ type: 'text', collation: 'C', primaryKeyConstraintName: 'PK_audit_log' })
  id: string;

  @Column({ type: 'timestamptz' })
  at: Date;

  @Column({ type: 'text', collation: 'C' })
  namespace: string;

  /** The subject that acted, as `auth/whoami` prints it. */
  @Column({ type: 'text' })
  actor: string;

  /** `<entity>.<verb>`, e.g. `namespace.create`, `member.set`, `apikey.revoke`. */
  @Column({ type: 'text' })
  action: string;

  /** What was acted on: a namespace slug, a member subject, a key id. */
  @Column({ type: 'text' })
  target: string;

  @Column({ type: 'jsonb' })
  details: Record<string, unknown>;

  @Column({ name: 'request_id', type: 'text', nullable: true })
  requestId: string | null;
}
