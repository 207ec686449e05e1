import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { Principal } from '../../packages/server/src/common/principal.js';
import { SecretBox, SecretBoxError } from '../../packages/server/src/common/secret-box.js';
import { ConfigurationError, type AppConfig } from '../../packages/server/src/config/app.config.js';
import { ConfigModule } from '../../packages/server/src/config/config.module.js';
import { DatabaseModule } from '../../packages/server/src/database/database.module.js';
import { openDatabase } from '../../packages/server/src/database/database.startup.js';
import { TypeOrmPushNotificationStore } from '../../packages/server/src/database/typeorm-push-notification.store.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { ENTITIES } from '../../packages/server/src/entities.js';
import { ifAssigned } from '../support/assigned.js';

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined };
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

function contextFor(user: string, tenant?: string, requestedVersion?: string): ServerCallContext {
  return new ServerCallContext({
    user: new Principal({ subject: user, scheme: 'none', defaultNamespace: 'default', grants: new Map() }),
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

const TOKEN = 'client-token';
const CREDENTIALS = 'secret-credential';

interface RawRow {
  config: Record<string, unknown>;
  secrets: string | null;
  whole: string;
}

/** The stored rows as PostgreSQL holds them, each also as one text of every column. */
async function rawRows(dataSource: DataSource): Promise<RawRow[]> {
  return dataSource.query(
    'SELECT p.config, p.secrets, row_to_json(p)::text AS whole FROM push_notification_configs p ORDER BY created_seq',
  );
}

describe.each(databaseTargets())('TypeOrmPushNotificationStore on $kind', (target) => {
  let database: TestDatabase;
  let config: AppConfig;
  let dataSource: DataSource;
  let secretKey: Buffer;
  let store: TypeOrmPushNotificationStore;

  function storeWith(...keys: Buffer[]): TypeOrmPushNotificationStore {
    return new TypeOrmPushNotificationStore(dataSource, config, new SecretBox(keys));
  }

  beforeAll(async () => {
    database = await target.create();
    config = database.config({ CLEVERAGENTS_MIGRATE_ON_START: 'true' });
    dataSource = await openDatabase(config, silent, { entities: ENTITIES });
    secretKey = randomBytes(32);
    store = storeWith(secretKey);
  });
  afterAll(async () => {
    await ifAssigned(dataSource)?.destroy();
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
      new ServerCallContext({
        user: new Principal({ subject: 'alice', scheme: 'none', defaultNamespace: 'default', grants: new Map() }),
      }),
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

  it('keeps at most maxPushConfigsPerTask configs per task, even when they are saved at once', async () => {
    const capped = new TypeOrmPushNotificationStore(
      dataSource,
      { defaultNamespace: 'default', maxPushConfigsPerTask: 3 },
      new SecretBox([secretKey]),
    );
    const saves = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => capped.save('task-1', contextFor('alice'), aConfig('task-1', `c${i}`))),
    );
    expect(saves.filter((s) => s.status === 'fulfilled')).toHaveLength(3);
    const refusals = saves.flatMap((s) => (s.status === 'rejected' ? [s.reason as Error] : []));
    expect(refusals.map((e) => [e.name, e.message])).toEqual(
      Array(5).fill(['PushConfigLimitError', 'A task holds at most 3 push notification configs']),
    );
    const stored = await capped.load('task-1', contextFor('alice'));
    expect(stored).toHaveLength(3);
    // Saving a stored id again replaces it; other tasks and other owners count on their own.
    await capped.save('task-1', contextFor('alice'), aConfig('task-1', stored[0].id, 'https://hooks.example.com/b'));
    await capped.save('task-2', contextFor('alice'), aConfig('task-2', 'other-task'));
    await capped.save('task-1', contextFor('bob'), aConfig('task-1', 'other-owner'));
    expect(await capped.load('task-1', contextFor('alice'))).toHaveLength(3);
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

  it('stores the token and credentials sealed: neither is in the row in plaintext', async () => {
    const saved = aConfig('task-1', 'sealed');
    await store.save('task-1', contextFor('alice', undefined, '1.0'), saved);
    expect(await store.load('task-1', contextFor('alice'))).toEqual([saved]);

    const [row] = await rawRows(dataSource);
    expect(row.config).toEqual({ id: 'sealed', taskId: 'task-1', authentication: { scheme: 'Bearer' } });
    expect(row.secrets).toMatch(/^v1:[0-9a-f]{8}:[A-Za-z0-9+/]+=*$/);
    for (const secret of [TOKEN, CREDENTIALS]) {
      expect(row.whole).not.toContain(secret);
      expect(row.whole).not.toContain(Buffer.from(secret).toString('base64'));
    }
  });

  it('round-trips every combination of secrets exactly, and seals the URL even when there is no other', async () => {
    const variants: TaskPushNotificationConfig[] = [
      { ...aConfig('task-1', 'none'), token: '', authentication: undefined },
      { ...aConfig('task-1', 'token-only'), authentication: undefined },
      {
        ...aConfig('task-1', 'basic-only'),
        token: '',
        authentication: { scheme: 'Basic', credentials: 'dXNlcjpwYXNz' },
      },
      { ...aConfig('task-1', 'scheme-only'), token: '', authentication: { scheme: 'Bearer', credentials: '' } },
      { ...aConfig('task-1', 'no-scheme'), authentication: { scheme: '', credentials: 'bare' } },
      { ...aConfig('task-1', 'unicode'), token: 'tökên 🔑', tenant: 'acme' },
    ];
    for (const variant of variants) await store.save('task-1', contextFor('alice', 'acme'), variant);
    expect(await store.load('task-1', contextFor('alice', 'acme'))).toEqual(variants);
    const rows = await rawRows(dataSource);
    expect(rows.map((row) => row.secrets !== null)).toEqual([true, true, true, true, true, true]);
    for (const row of rows) {
      for (const secret of [TOKEN, 'dXNlcjpwYXNz', 'bare', 'tökên']) expect(row.whole).not.toContain(secret);
    }
  });

  it('refuses to open the secrets under another key, with an error naming the config and the variable', async () => {
    await store.save('task-1', contextFor('alice'), aConfig('task-1', 'cfg-a'));
    const failure = await storeWith(randomBytes(32))
      .load('task-1', contextFor('alice'))
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(SecretBoxError);
    expect((failure as Error).message).toContain('"cfg-a"');
    expect((failure as Error).message).toContain('CLEVERAGENTS_SECRET_KEY');
    expect((failure as Error).message).not.toContain(CREDENTIALS);
  });

  it('opens secrets sealed with an older key once the keys rotate, and seals with the new one', async () => {
    const newKey = randomBytes(32);
    await store.save('task-1', contextFor('alice'), aConfig('task-1', 'old'));
    const rotated = storeWith(newKey, secretKey);
    expect(await rotated.load('task-1', contextFor('alice'))).toEqual([aConfig('task-1', 'old')]);
    await rotated.save('task-1', contextFor('alice'), aConfig('task-1', 'new'));
    expect(
      await storeWith(newKey)
        .load('task-1', contextFor('alice'))
        .catch((e: unknown) => e),
    ).toBeInstanceOf(SecretBoxError);
    await storeWith(newKey).delete('task-1', contextFor('alice'), 'old');
    expect(await storeWith(newKey).load('task-1', contextFor('alice'))).toEqual([aConfig('task-1', 'new')]);
  });

  it('detects a sealed value that was altered, moved to another config, or whose URL was changed', async () => {
    await store.save('task-1', contextFor('alice'), aConfig('task-1', 'a'));
    await store.save('task-1', contextFor('alice'), aConfig('task-1', 'b'));
    const rejects = async () =>
      expect(await store.load('task-1', contextFor('alice')).catch((e: unknown) => e)).toBeInstanceOf(SecretBoxError);

    await dataSource.query(
      `UPDATE push_notification_configs SET secrets = (SELECT secrets FROM push_notification_configs WHERE id = 'a')
       WHERE id = 'b'`,
    );
    await rejects();

    await store.save('task-1', contextFor('alice'), aConfig('task-1', 'b'));
    await dataSource.query(
      `UPDATE push_notification_configs SET config = jsonb_set(config, '{url}', '"https://attacker.example.com"')
       WHERE id = 'b'`,
    );
    await rejects();

    await store.save('task-1', contextFor('alice'), aConfig('task-1', 'b'));
    const [, row] = await rawRows(dataSource);
    const [version, keyId, data] = row.secrets!.split(':');
    const bytes = Buffer.from(data, 'base64');
    bytes[bytes.length - 1] ^= 0x01;
    await dataSource.query(`UPDATE push_notification_configs SET secrets = $1 WHERE id = 'b'`, [
      `${version}:${keyId}:${bytes.toString('base64')}`,
    ]);
    await rejects();
  });

  it('seals the webhook URL: credentials in its user info or query are not in the row', async () => {
    const url = 'https://hook-user:hook-pass@hooks.example.com/a2a?sig=query-signature';
    const saved = { ...aConfig('task-1', 'url-secrets', url), token: '', authentication: undefined };
    await store.save('task-1', contextFor('alice', undefined, '1.0'), saved);
    expect(await store.load('task-1', contextFor('alice'))).toEqual([saved]);
    const [row] = await rawRows(dataSource);
    for (const secret of ['hook-pass', 'query-signature', 'hook-user', 'hooks.example.com']) {
      expect(row.whole).not.toContain(secret);
    }
  });

  it('still loads a row sealed before URLs were (plain URL, sealed token), and seals its URL when saved again', async () => {
    const earlier = aConfig('task-1', 'earlier', 'https://hooks.example.com/a2a?sig=earlier-signature');
    const sealed = new SecretBox([secretKey]).seal(
      JSON.stringify({ token: TOKEN, credentials: CREDENTIALS }),
      JSON.stringify(['push_notification_configs', 'task-1', 'earlier', earlier.url]),
    );
    await dataSource.query(
      `INSERT INTO push_notification_configs (namespace, owner, task_id, id, config, secrets, wire_version)
       VALUES ('default', 'alice', 'task-1', 'earlier', $1::jsonb, $2, '1.0')`,
      [
        JSON.stringify({ id: 'earlier', taskId: 'task-1', url: earlier.url, authentication: { scheme: 'Bearer' } }),
        sealed,
      ],
    );
    expect(await store.loadWithMetadata('task-1', contextFor('alice'))).toEqual([
      { config: earlier, wireVersion: '1.0' },
    ]);

    await store.save('task-1', contextFor('alice', undefined, '1.0'), earlier);
    const [row] = await rawRows(dataSource);
    expect(row.whole).not.toContain('earlier-signature');
    expect(await store.load('task-1', contextFor('alice'))).toEqual([earlier]);
  });

  it('still loads a row written before secrets were sealed, and seals it when it is saved again', async () => {
    const legacy = aConfig('task-1', 'legacy');
    await dataSource.query(
      `INSERT INTO push_notification_configs (namespace, owner, task_id, id, config, wire_version)
       VALUES ('default', 'alice', 'task-1', 'legacy', $1::jsonb, '0.3')`,
      [
        JSON.stringify({
          id: 'legacy',
          taskId: 'task-1',
          url: legacy.url,
          token: TOKEN,
          authentication: { scheme: 'Bearer', credentials: CREDENTIALS },
        }),
      ],
    );
    expect(await store.loadWithMetadata('task-1', contextFor('alice'))).toEqual([
      { config: legacy, wireVersion: '0.3' },
    ]);

    await store.save('task-1', contextFor('alice', undefined, '0.3'), legacy);
    const [row] = await rawRows(dataSource);
    expect(row.secrets).not.toBeNull();
    expect(row.whole).not.toContain(TOKEN);
    expect(row.whole).not.toContain(CREDENTIALS);
    expect(row.whole).not.toContain(legacy.url);
    expect(await store.load('task-1', contextFor('alice'))).toEqual([legacy]);
  });
});

async function boot(config: AppConfig) {
  return Test.createTestingModule({
    imports: [ConfigModule.forRoot(config), DatabaseModule.forRoot({ entities: ENTITIES })],
  })
    .setLogger(silent)
    .compile();
}

describe.each(databaseTargets())('push config persistence on $kind', (target) => {
  let database: TestDatabase;
  let keyDir: string;
  /** The embedded database keeps its key file in its own data directory; PostgreSQL in a scratch one. */
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await target.create();
    keyDir = await mkdtemp(join(tmpdir(), 'cleveragents-key-'));
    env = {
      CLEVERAGENTS_MIGRATE_ON_START: 'true',
      ...(target.kind === 'postgres' ? { CLEVERAGENTS_DATA_DIR: keyDir } : {}),
    };
  });
  afterAll(async () => {
    await database.cleanup();
    await rm(keyDir, { recursive: true, force: true });
  });

  it('keeps configs, their secrets and their wire version across a close and reopen, with one key file', async () => {
    const config = database.config(env);
    const keyFile = join(target.kind === 'postgres' ? keyDir : database.env.CLEVERAGENTS_DATA_DIR, 'secret.key');
    expect(config.secretKey).toEqual({ source: 'file', path: keyFile });

    const first = await boot(config);
    await first
      .get(TypeOrmPushNotificationStore)
      .save('task-1', contextFor('alice', undefined, '1.0'), aConfig('task-1', 'durable'));
    await first.close();
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const key = await readFile(keyFile, 'utf8');
    expect(Buffer.from(key.trim(), 'base64')).toHaveLength(32);

    const second = await boot(config);
    try {
      expect(await second.get(TypeOrmPushNotificationStore).loadWithMetadata('task-1', contextFor('alice'))).toEqual([
        { config: aConfig('task-1', 'durable'), wireVersion: '1.0' },
      ]);
    } finally {
      await second.close();
    }
    expect(await readFile(keyFile, 'utf8')).toBe(key);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
  });

  it('opens the secrets with CLEVERAGENTS_SECRET_KEY set to the content of the key file', async () => {
    const keyFile = join(target.kind === 'postgres' ? keyDir : database.env.CLEVERAGENTS_DATA_DIR, 'secret.key');
    const key = (await readFile(keyFile, 'utf8')).trim();
    const moduleRef = await boot(database.config({ ...env, CLEVERAGENTS_SECRET_KEY: key }));
    try {
      expect(await moduleRef.get(TypeOrmPushNotificationStore).load('task-1', contextFor('alice'))).toEqual([
        aConfig('task-1', 'durable'),
      ]);
    } finally {
      await moduleRef.close();
    }
  });

  it(`${target.kind === 'postgres' ? 'refuses' : 'does not need'} a missing CLEVERAGENTS_SECRET_KEY in production`, () => {
    let failure: unknown;
    try {
      database.config({ NODE_ENV: 'production' });
    } catch (error) {
      failure = error;
    }
    if (target.kind === 'postgres') {
      expect(failure).toBeInstanceOf(ConfigurationError);
      expect((failure as ConfigurationError).problems.map((p) => p.variable)).toEqual(['CLEVERAGENTS_SECRET_KEY']);
      expect((failure as Error).message).toMatch(/CLEVERAGENTS_SECRET_KEY: required when NODE_ENV=production/);
    } else {
      expect(failure).toBeUndefined();
    }
  });
});
