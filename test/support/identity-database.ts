import type { DataSource } from 'typeorm';
import { identityServices, type IdentityServices } from '../../packages/server/src/cli/identity-services.js';
import { DomainError } from '../../packages/server/src/common/domain.errors.js';
import type { AppConfig } from '../../packages/server/src/config/app.config.js';
import { openDatabase } from '../../packages/server/src/database/database.startup.js';
import type { DatabaseTarget, TestDatabase } from './database.js';
import { ENTITIES } from '../../packages/server/src/entities.js';

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined };

/** A migrated database of its own with the identity services on it (no Nest). */
export interface IdentityFixture extends IdentityServices {
  database: TestDatabase;
  config: AppConfig;
  dataSource: DataSource;
  /** Empties every table these services touch, then creates the default namespace again. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function openIdentityFixture(
  target: DatabaseTarget,
  extraEnv: Record<string, string> = {},
): Promise<IdentityFixture> {
  const database = await target.create();
  const config = database.config({ CLEVERAGENTS_MIGRATE_ON_START: 'true', ...extraEnv });
  const dataSource = await openDatabase(config, silent, { entities: ENTITIES });
  const services = identityServices(dataSource, config);
  const { apiKeys, bootstrap } = services;
  return {
    database,
    config,
    dataSource,
    ...services,
    reset: async () => {
      await apiKeys.whenIdle();
      await dataSource.query(
        'TRUNCATE audit_log, api_keys, approval_webhooks, namespace_members, namespaces, tasks, push_notification_configs, ' +
          'registry_entries, registry_changes, registry_sequences',
      );
      await bootstrap.ensureDefaultNamespace();
    },
    close: async () => {
      await apiKeys.whenIdle();
      await dataSource.destroy();
      await database.cleanup();
    },
  };
}

/** The domain error a call failed with; fails the test when it succeeded or threw something else. */
export async function rejectionOf(call: Promise<unknown>): Promise<DomainError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected the call to fail with a domain error, but it succeeded');
}

/** How many audit rows there are (in one namespace, or all). */
export async function auditCount(dataSource: DataSource, namespace?: string): Promise<number> {
  const rows: { n: string }[] = namespace
    ? await dataSource.query('SELECT count(*) AS n FROM audit_log WHERE namespace = $1', [namespace])
    : await dataSource.query('SELECT count(*) AS n FROM audit_log');
  return Number(rows[0].n);
}
