import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * One push-notification config of a task, in the task's (namespace, owner) scope. `config` is the
 * SDK's canonical JSON (`TaskPushNotificationConfig.toJSON`); `wire_version` is the A2A version the
 * config was registered over, so that the sender answers each webhook in the shape it asked for.
 */
@Entity({ name: 'push_notification_configs' })
export class PushNotificationConfigEntity {
  @PrimaryColumn({ type: 'text' })
  namespace: string;

  @PrimaryColumn({ type: 'text' })
  owner: string;

  @PrimaryColumn({ name: 'task_id', type: 'text', collation: 'C' })
  taskId: string;

  @PrimaryColumn({ type: 'text', collation: 'C' })
  id: string;

  @Column({ type: 'jsonb' })
  config: Record<string, unknown>;

  @Column({ name: 'wire_version', type: 'text' })
  wireVersion: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
