import { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { PushNotificationStore, ServerCallContext, StoredPushNotificationConfig } from '@a2a-js/sdk/server';
import type { DataSource } from 'typeorm';
import { ulid } from 'ulid';
import type { AppConfig } from '../config/app.config.js';
import { resolveStoreScope, type StoreScope } from './store-scope.js';

/** The wire version the SDK assumes when a request names none (A2A-Version absent means 0.3). */
export const LEGACY_WIRE_VERSION = '0.3';

interface ConfigRow {
  config: Record<string, unknown>;
  wire_version: string;
}

/**
 * The SDK's PushNotificationStore on PostgreSQL (or the embedded PGlite), scoped like the task store
 * by (namespace, owner). Each config keeps the A2A wire version it was registered over, so that the
 * sender serialises each webhook in the shape its client asked for. A config saved without an id
 * gets a ULID.
 */
export class TypeOrmPushNotificationStore implements PushNotificationStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly config: Pick<AppConfig, 'defaultNamespace'>,
  ) {}

  async save(
    taskId: string,
    context: ServerCallContext,
    pushNotificationConfig: TaskPushNotificationConfig,
  ): Promise<void> {
    if (!taskId) throw new Error('Cannot store a push notification config without a task id');
    // The SDK reads the assigned id back from the object it passed in.
    if (!pushNotificationConfig.id) pushNotificationConfig.id = ulid();
    const scope = this.scopeOf(context);
    await this.dataSource.query(
      `INSERT INTO push_notification_configs (namespace, owner, task_id, id, config, wire_version)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6)
       ON CONFLICT (namespace, owner, task_id, id) DO UPDATE SET
         config = EXCLUDED.config,
         wire_version = EXCLUDED.wire_version,
         updated_at = now()`,
      [
        scope.namespace,
        scope.owner,
        taskId,
        pushNotificationConfig.id,
        JSON.stringify(TaskPushNotificationConfig.toJSON(pushNotificationConfig)),
        context.requestedVersion || LEGACY_WIRE_VERSION,
      ],
    );
  }

  async load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return (await this.loadWithMetadata(taskId, context)).map((stored) => stored.config);
  }

  async loadWithMetadata(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    const scope = this.scopeOf(context);
    const rows: ConfigRow[] = await this.dataSource.query(
      `SELECT config, wire_version FROM push_notification_configs
       WHERE namespace = $1 AND owner = $2 AND task_id = $3
       ORDER BY created_at, id`,
      [scope.namespace, scope.owner, taskId],
    );
    return rows.map((row) => ({
      config: TaskPushNotificationConfig.fromJSON(row.config),
      wireVersion: row.wire_version,
    }));
  }

  /** Deletes one config, or every config of the task when `configId` is undefined. */
  async delete(taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    const scope = this.scopeOf(context);
    const values: unknown[] = [scope.namespace, scope.owner, taskId];
    let sql = 'DELETE FROM push_notification_configs WHERE namespace = $1 AND owner = $2 AND task_id = $3';
    if (configId !== undefined) {
      values.push(configId);
      sql += ' AND id = $4';
    }
    await this.dataSource.query(sql, values);
  }

  private scopeOf(context: ServerCallContext): StoreScope {
    return resolveStoreScope(context, this.config.defaultNamespace);
  }
}
