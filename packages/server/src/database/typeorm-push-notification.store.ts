import { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { PushNotificationStore, ServerCallContext, StoredPushNotificationConfig } from '@a2a-js/sdk/server';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ulid } from '../common/ulid.js';
import { SecretBox, SecretBoxError } from '../common/secret-box.js';
import { AppConfig } from '../config/app.config.js';
import { QueryBatcher } from './query-batcher.js';
import { resolveStoreScope, type StoreScope } from './store-scope.js';

/** The wire version the SDK assumes when a request names none (A2A-Version absent means 0.3). */
export const LEGACY_WIRE_VERSION = '0.3';

interface ConfigRow {
  config: Record<string, unknown>;
  secrets: string | null;
  wire_version: string;
}

/** What the `secrets` column seals: the config's `token`, `authentication.credentials` and `url`. */
interface ConfigSecrets {
  token: string;
  credentials: string;
  /** Absent in rows sealed before the URL was; theirs is in `config`. */
  url?: string;
}

/** A save that would give a task more than CLEVERAGENTS_MAX_PUSH_CONFIGS_PER_TASK configs. */
export class PushConfigLimitError extends Error {
  constructor(readonly limit: number) {
    super(`A task holds at most ${limit} push notification configs`);
    this.name = 'PushConfigLimitError';
  }
}

/**
 * The SDK's PushNotificationStore on PostgreSQL, scoped by (namespace, owner), each config with its wire
 * version and its secrets sealed (docs/design-notes.md#push-config-store).
 */
@Injectable()
export class TypeOrmPushNotificationStore implements PushNotificationStore {
  /** The sender looks for a task's configs on every task event: concurrent lookups share a query. */
  private readonly lookups: QueryBatcher<StoreScope & { taskId: string }, ConfigRow[]>;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(AppConfig) private readonly config: Pick<AppConfig, 'defaultNamespace' | 'maxPushConfigsPerTask'>,
    private readonly secretBox: SecretBox,
  ) {
    this.lookups = new QueryBatcher((keys) => this.lookUpAll(keys), { maxBatch: 100, maxInFlight: 2 });
  }

  async save(
    taskId: string,
    context: ServerCallContext,
    pushNotificationConfig: TaskPushNotificationConfig,
  ): Promise<void> {
    if (!taskId) throw new Error('Cannot store a push notification config without a task id');
    // The SDK reads the assigned id back from the object it passed in.
    if (!pushNotificationConfig.id) pushNotificationConfig.id = ulid();
    const scope = this.scopeOf(context);
    const { token, authentication, url } = pushNotificationConfig;
    const credentials = authentication?.credentials ?? '';
    const withoutSecrets: TaskPushNotificationConfig = {
      ...pushNotificationConfig,
      url: '',
      token: '',
      authentication: authentication && { ...authentication, credentials: '' },
    };
    const secrets: ConfigSecrets = { token, credentials, url };
    const sealed = this.secretBox.seal(JSON.stringify(secrets), sealingContext(taskId, withoutSecrets));
    const limit = this.config.maxPushConfigsPerTask;
    await this.dataSource.transaction(async (tx) => {
      // Saves for one task take turns, so that concurrent ones cannot together pass the cap.
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        JSON.stringify(['push_notification_configs', scope.namespace, scope.owner, taskId]),
      ]);
      const [{ others }] = await tx.query<[{ others: number }]>(
        `SELECT count(*)::int AS others FROM push_notification_configs
         WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND id <> $4`,
        [scope.namespace, scope.owner, taskId, pushNotificationConfig.id],
      );
      if (others >= limit) throw new PushConfigLimitError(limit);
      await tx.query(
        `INSERT INTO push_notification_configs (namespace, owner, task_id, id, config, secrets, wire_version)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)
       ON CONFLICT (namespace, owner, task_id, id) DO UPDATE SET
         config = EXCLUDED.config,
         secrets = EXCLUDED.secrets,
         wire_version = EXCLUDED.wire_version,
         updated_at = now()`,
        [
          scope.namespace,
          scope.owner,
          taskId,
          pushNotificationConfig.id,
          JSON.stringify(TaskPushNotificationConfig.toJSON(withoutSecrets)),
          sealed,
          context.requestedVersion || LEGACY_WIRE_VERSION,
        ],
      );
    });
  }

  async load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return (await this.loadWithMetadata(taskId, context)).map((stored) => stored.config);
  }

  async loadWithMetadata(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    const rows = await this.lookups.submit({ ...this.scopeOf(context), taskId });
    return rows.map((row) => ({ config: this.unseal(taskId, row), wireVersion: row.wire_version }));
  }

  private async lookUpAll(keys: readonly (StoreScope & { taskId: string })[]): Promise<ConfigRow[][]> {
    if (keys.length === 1) {
      const rows: ConfigRow[] = await this.dataSource.query(
        `SELECT config, secrets, wire_version FROM push_notification_configs
         WHERE namespace = $1 AND owner = $2 AND task_id = $3
         ORDER BY created_seq`,
        [keys[0].namespace, keys[0].owner, keys[0].taskId],
      );
      return [rows];
    }
    const rows: (ConfigRow & { i: string })[] = await this.dataSource.query(
      `SELECT k.i, c.config, c.secrets, c.wire_version
       FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k(namespace, owner, task_id, i)
       JOIN push_notification_configs c
         ON c.namespace = k.namespace AND c.owner = k.owner AND c.task_id = k.task_id COLLATE "C"
       ORDER BY k.i, c.created_seq`,
      [keys.map((k) => k.namespace), keys.map((k) => k.owner), keys.map((k) => k.taskId)],
    );
    const found: ConfigRow[][] = keys.map(() => []);
    for (const row of rows) found[Number(row.i) - 1].push(row);
    return found;
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

  /** The config as the client gave it: the stored JSON with its sealed secrets put back. */
  private unseal(taskId: string, row: ConfigRow): TaskPushNotificationConfig {
    const config = TaskPushNotificationConfig.fromJSON(row.config);
    if (row.secrets === null) return config; // a row from before sealing: everything in plaintext in config
    let secrets: ConfigSecrets;
    try {
      secrets = JSON.parse(this.secretBox.open(row.secrets, sealingContext(taskId, config))) as ConfigSecrets;
    } catch (error) {
      throw new SecretBoxError(
        `Cannot open the secrets of push notification config "${config.id}" of task "${taskId}": ` +
          `${(error as Error).message}. Is CLEVERAGENTS_SECRET_KEY (or the key file in CLEVERAGENTS_DATA_DIR) ` +
          `the key they were sealed with?`,
        { cause: error },
      );
    }
    if (secrets.url !== undefined) config.url = secrets.url;
    config.token = secrets.token;
    if (secrets.credentials) {
      config.authentication = { scheme: '', ...config.authentication, credentials: secrets.credentials };
    }
    return config;
  }
}

/** What a config's sealed secrets are bound to: this task and config id (and, in older rows, the plaintext URL). */
function sealingContext(taskId: string, config: TaskPushNotificationConfig): string {
  return JSON.stringify(['push_notification_configs', taskId, config.id, config.url]);
}
