import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { TaskState } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { ConfigModule } from '../../packages/server/src/config/config.module.js';
import type { AppConfig } from '../../packages/server/src/config/app.config.js';
import { LOCK_FILE_NAME } from '../../packages/server/src/database/data-dir.lock.js';
import { PendingMigrationsError } from '../../packages/server/src/database/database.errors.js';
import { DatabaseHealth } from '../../packages/server/src/database/database.health.js';
import { DatabaseModule } from '../../packages/server/src/database/database.module.js';
import { TypeOrmPushNotificationStore } from '../../packages/server/src/database/typeorm-push-notification.store.js';
import { TypeOrmTaskStore } from '../../packages/server/src/database/typeorm-task.store.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { ENTITIES } from '../../packages/server/src/entities.js';

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined };

async function boot(config: AppConfig) {
  return Test.createTestingModule({
    imports: [ConfigModule.forRoot(config), DatabaseModule.forRoot({ entities: ENTITIES })],
  })
    .setLogger(silent)
    .compile();
}

describe.each(databaseTargets())('DatabaseModule on $kind', (target) => {
  let database: TestDatabase;

  beforeEach(async () => {
    database = await target.create();
  });
  afterEach(async () => {
    await database.cleanup();
  });

  it('provides a ready DataSource, both stores and the health check, and closes on shutdown', async () => {
    const config = database.config({ CLEVERAGENTS_MIGRATE_ON_START: 'true' });
    const moduleRef = await boot(config);
    const dataSource = moduleRef.get(DataSource);
    expect(dataSource.isInitialized).toBe(true);

    const context = new ServerCallContext({});
    await moduleRef.get(TypeOrmTaskStore).save(
      {
        id: 't1',
        contextId: 'c1',
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [],
        history: [],
        metadata: undefined,
      },
      context,
    );
    expect((await moduleRef.get(TypeOrmTaskStore).load('t1', context))?.contextId).toBe('c1');
    const pushConfig = {
      tenant: '',
      id: '',
      taskId: 't1',
      url: 'https://hooks.example.com',
      token: '',
      authentication: undefined,
    };
    await moduleRef.get(TypeOrmPushNotificationStore).save('t1', context, pushConfig);
    expect(await moduleRef.get(TypeOrmPushNotificationStore).load('t1', context)).toEqual([pushConfig]);

    const health = moduleRef.get(DatabaseHealth);
    await health.ping();
    expect((await health.describe()).kind).toBe(target.kind);

    await moduleRef.close();
    expect(dataSource.isInitialized).toBe(false);
    if (target.kind === 'embedded') {
      expect(existsSync(join(database.env.CLEVERAGENTS_DATA_DIR, LOCK_FILE_NAME))).toBe(false);
    }
    // Reopening finds the data and, migrated already, starts in the strict mode too.
    const again = await boot(database.config());
    try {
      expect((await again.get(TypeOrmTaskStore).load('t1', context))?.id).toBe('t1');
    } finally {
      await again.close();
    }
  });

  if (target.kind === 'postgres') {
    it('fails the boot on a pending migration without CLEVERAGENTS_MIGRATE_ON_START', async () => {
      const empty = await target.create({ migrated: false });
      try {
        await expect(boot(empty.config())).rejects.toBeInstanceOf(PendingMigrationsError);
      } finally {
        await empty.cleanup();
      }
    });
  }
});
