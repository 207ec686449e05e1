import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import type { DataSource } from 'typeorm';
import { Principal } from '../../src/auth/principal.js';
import type { AppConfig } from '../../src/config/app.config.js';
import { openDatabase } from '../../src/database/database.startup.js';
import { TypeOrmPushNotificationStore } from '../../src/database/typeorm-push-notification.store.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined };
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

function contextFor(user: string, tenant?: string, requestedVersion?: string): ServerCallContext {
  return new ServerCallContext({
    user: new Principal(user, 'none', 'default', 'owner-everywhere'),
    tenant,
    requestedVersion,
  });
}

function aConfig(taskId: string, id = '', url = 'https://hooks.example.com/a2a'): TaskPushNotificationConfig {
  return {
    tenant: '',
    id,
    taskId,
    url,
    token: 'client-token',
    authentication: { scheme: 'Bearer', credentials: 'secret-credential' },
  };
}

describe.each(databaseTargets())('TypeOrmPushNotificationStore on $kind', (target) => {
  let database: TestDatabase;
  let config: AppConfig;
  let dataSource: DataSource;
  let store: TypeOrmPushNotificationStore;

  beforeAll(async () => {
    database = await target.create();
    config = database.config({ CLEVERAGENTS_MIGRATE_ON_START: 'true' });
    dataSource = await openDatabase(config, silent);
    store = new TypeOrmPushNotificationStore(dataSource, config);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database.cleanup();
  });
  beforeEach(async () => {
    await dataSource.query('DELETE FROM push_notification_configs');
  });

  it('assigns a ULID in place to a config saved without id, and loads it back', async () => {
    const config = aConfig('task-1');
    await store.save('task-1', contextFor('alice', undefined, '1.0'), config);
    expect(config.id).toMatch(ULID);
    expect(await store.load('task-1', contextFor('alice'))).toEqual([config]);
  });

  it('keeps a client-chosen id and replaces the config saved again under it', async () => {
    await store.save('task-1', contextFor('alice', undefined, '1.0'), aConfig('task-1', 'cfg-a'));
    const updated = aConfig('task-1', 'cfg-a', 'https://hooks.example.com/other');
    await store.save('task-1', contextFor('alice', undefined, '0.3'), updated);
    expect(await store.loadWithMetadata('task-1', contextFor('alice'))).toEqual([
      { config: updated, wireVersion: '0.3' },
    ]);
  });

  it('remembers the wire version each config was registered over', async () => {
    await store.save('task-1', contextFor('alice', undefined, '1.0'), aConfig('task-1', 'v1'));
    await store.save('task-1', contextFor('alice', undefined, '0.3'), aConfig('task-1', 'v03'));
    await store.save(
      'task-1',
      new ServerCallContext({ user: new Principal('alice', 'none', 'default', 'owner-everywhere') }),
      aConfig('task-1', 'none'),
    );
    const stored = await store.loadWithMetadata('task-1', contextFor('alice'));
    expect(stored.map((s) => [s.config.id, s.wireVersion])).toEqual([
      ['v1', '1.0'],
      ['v03', '0.3'],
      ['none', '0.3'],
    ]);
  });

  it('keeps configs per task, in the order they were created', async () => {
    await store.save('task-1', contextFor('alice'), aConfig('task-1', 'b'));
    await store.save('task-1', contextFor('alice'), aConfig('task-1', 'a'));
    await store.save('task-2', contextFor('alice'), aConfig('task-2', 'c'));
    expect((await store.load('task-1', contextFor('alice'))).map((c) => c.id)).toEqual(['b', 'a']);
    expect((await store.load('task-2', contextFor('alice'))).map((c) => c.id)).toEqual(['c']);
    expect(await store.load('task-3', contextFor('alice'))).toEqual([]);
  });

  it('scopes configs by owner and namespace', async () => {
    await store.save('task-1', contextFor('alice'), aConfig('task-1', 'alices'));
    expect(await store.load('task-1', contextFor('bob'))).toEqual([]);
    expect(await store.load('task-1', contextFor('alice', 'other'))).toEqual([]);
    await store.save('task-1', contextFor('bob'), aConfig('task-1', 'alices', 'https://bob.example.com'));
    expect((await store.load('task-1', contextFor('alice')))[0].url).toBe('https://hooks.example.com/a2a');
    await store.delete('task-1', contextFor('bob'));
    expect(await store.load('task-1', contextFor('alice'))).toHaveLength(1);
  });

  it('deletes one config by id, or all configs of the task', async () => {
    for (const id of ['x', 'y', 'z']) await store.save('task-1', contextFor('alice'), aConfig('task-1', id));
    await store.save('task-2', contextFor('alice'), aConfig('task-2', 'keep'));
    await store.delete('task-1', contextFor('alice'), 'y');
    expect((await store.load('task-1', contextFor('alice'))).map((c) => c.id)).toEqual(['x', 'z']);
    await store.delete('task-1', contextFor('alice'), 'no-such-config');
    expect(await store.load('task-1', contextFor('alice'))).toHaveLength(2);
    await store.delete('task-1', contextFor('alice'));
    expect(await store.load('task-1', contextFor('alice'))).toEqual([]);
    expect(await store.load('task-2', contextFor('alice'))).toHaveLength(1);
  });
});

describe.each(databaseTargets())('push config persistence on $kind', (target) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await target.create();
  });
  afterAll(async () => {
    await database.cleanup();
  });

  it('keeps configs and their wire version across a close and reopen', async () => {
    const config = database.config({ CLEVERAGENTS_MIGRATE_ON_START: 'true' });
    const first = await openDatabase(config, silent);
    await new TypeOrmPushNotificationStore(first, config).save(
      'task-1',
      contextFor('alice', undefined, '1.0'),
      aConfig('task-1', 'durable'),
    );
    await first.destroy();

    const second = await openDatabase(config, silent);
    try {
      expect(
        await new TypeOrmPushNotificationStore(second, config).loadWithMetadata('task-1', contextFor('alice')),
      ).toEqual([{ config: aConfig('task-1', 'durable'), wireVersion: '1.0' }]);
    } finally {
      await second.destroy();
    }
  });
});
