import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { TaskScopedColumns } from './owner-scoped-columns.js';

/**
 * One push-notification config of a task, in the task's (namespace, owner) scope. `config` is the
 * SDK's canonical JSON (`TaskPushNotificationConfig.toJSON`) without its secrets (`token`,
 * `authentication.credentials`, `url`), which `secrets` holds sealed (SecretBox); `wire_version` is the A2A
 * version the config was registered over, so that the sender answers each webhook in the shape it
 * asked for.
 */
@Entity({ name: 'push_notification_configs' })
export class PushNotificationConfigEntity extends TaskScopedColumns {
  @PrimaryColumn({ type: 'text', collation: 'C' })
  id: string;

  @Column({ type: 'jsonb' })
  config: Record<string, unknown>;

  /**
   * Sealed JSON `{ token, credentials, url }`. Rows written before secrets were sealed have null here
   * and their secrets in plaintext in `config`; rows sealed before the URL was keep it in `config`.
   */
  @Column({ type: 'text', nullable: true })
  secrets: string | null;

  @Column({ name: 'wire_version', type: 'text' })
  wireVersion: string;

  /** Registration order: configs list in it (two saves in one clock tick share a created_at). */
  @Column({ name: 'created_seq', type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS' })
  createdSeq: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
