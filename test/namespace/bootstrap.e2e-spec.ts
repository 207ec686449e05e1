import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuthModule } from '../../packages/server/src/auth/auth.module.js';
import { ApiKeyService } from '../../packages/server/src/auth/apikey/api-key.service.js';
import { ApiKeyVerifier, MembershipDirectory } from '../../packages/server/src/auth/identity.ports.js';
import { AppConfig } from '../../packages/server/src/config/app.config.js';
import { ConfigModule } from '../../packages/server/src/config/config.module.js';
import { DatabaseModule } from '../../packages/server/src/database/database.module.js';
import { openDatabase } from '../../packages/server/src/database/database.startup.js';
import { identityServices, type IdentityServices } from '../../packages/server/src/cli/identity-services.js';
import { BOOTSTRAP_SUBJECT, BootstrapService } from '../../packages/server/src/namespace/bootstrap.service.js';
import { NamespaceMembershipDirectory } from '../../packages/server/src/namespace/namespace-membership.directory.js';
import { NamespaceModule } from '../../packages/server/src/namespace/namespace.module.js';
import { RegistryModule } from '../../packages/server/src/registry/registry.module.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { ENTITIES } from '../../packages/server/src/entities.js';
import { ifAssigned } from '../support/assigned.js';

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined };
const KEY_IN_TEXT = /ca_[0-9a-z]{26}_[A-Za-z0-9_-]{43}/g;

/** `config` with other auth schemes: the server's config may not list every scheme yet. */
function withSchemes(config: AppConfig, schemes: readonly string[]): AppConfig {
  return Object.assign(Object.create(Object.getPrototypeOf(config) as object) as AppConfig, config, {
    authSchemes: schemes,
  });
}

describe.each(databaseTargets())('bootstrap on $kind', (target) => {
  describe('BootstrapService.bootstrapIdentity', () => {
    let database: TestDatabase;
    let dataSource: DataSource;
    let config: AppConfig;
    let services: IdentityServices;

    beforeAll(async () => {
      database = await target.create();
      config = database.config({
        CLEVERAGENTS_MIGRATE_ON_START: 'true',
        CLEVERAGENTS_DEFAULT_NAMESPACE: 'acme/platform',
      });
      dataSource = await openDatabase(config, silent, { entities: ENTITIES });
      services = identityServices(dataSource, config);
    });
    afterAll(async () => {
      await ifAssigned(dataSource)?.destroy();
      await database.cleanup();
    });
    beforeEach(async () => {
      await dataSource.query(
        'TRUNCATE audit_log, api_keys, approval_webhooks, namespace_members, namespaces, registry_entries, registry_changes, ' +
          'registry_sequences',
      );
    });

    it('creates the default namespace and its parents once, audited as the bootstrap', async () => {
      expect(await services.bootstrap.bootstrapIdentity(withSchemes(config, ['none']))).toEqual({
        createdNamespaces: ['acme', 'acme/platform'],
      });
      expect(await services.bootstrap.bootstrapIdentity(withSchemes(config, ['none']))).toEqual({
        createdNamespaces: [],
      });
      expect(await services.bootstrap.ensureDefaultNamespace()).toEqual([]);
      const rows: { slug: string; parent: string | null; created_by: string }[] = await dataSource.query(
        'SELECT slug, parent, created_by FROM namespaces ORDER BY slug',
      );
      expect(rows).toEqual([
        { slug: 'acme', parent: null, created_by: BOOTSTRAP_SUBJECT },
        { slug: 'acme/platform', parent: 'acme', created_by: BOOTSTRAP_SUBJECT },
      ]);
      const audit = await services.audit.list({ namespace: 'acme/platform' });
      expect(audit.items.map((r) => [r.action, r.actor])).toEqual([['namespace.create', BOOTSTRAP_SUBJECT]]);
      expect(await dataSource.query('SELECT id FROM api_keys')).toEqual([]);
    });

    it.each([['apiKey'], ['bearer'], ['oidc', 'apiKey']])(
      'with %p mints one owner key of the default namespace, and never again',
      async (...schemes) => {
        const first = await services.bootstrap.bootstrapIdentity(withSchemes(config, schemes));
        const key = first.bootstrapKey!;
        expect(key).toMatchObject({ name: 'bootstrap', namespace: 'acme/platform', role: 'owner', expiresAt: null });
        const verified = await services.apiKeys.verify(key.key);
        expect(verified).toMatchObject({ keyId: key.id, role: 'owner', namespace: 'acme/platform' });
        expect(verified?.createdBy).toBe(BOOTSTRAP_SUBJECT);

        expect(await services.bootstrap.bootstrapIdentity(withSchemes(config, schemes))).toEqual({
          createdNamespaces: [],
        });
        // Not after a revocation either: the database has held a key.
        await dataSource.query('UPDATE api_keys SET revoked_at = now()');
        expect((await services.bootstrap.bootstrapIdentity(withSchemes(config, schemes))).bootstrapKey).toBeUndefined();
        // Nor once the key itself is gone: its audit record remembers it.
        await dataSource.query('DELETE FROM api_keys');
        expect((await services.bootstrap.bootstrapIdentity(withSchemes(config, schemes))).bootstrapKey).toBeUndefined();
      },
    );

    it('mints no key when keys cannot authenticate', async () => {
      expect((await services.bootstrap.bootstrapIdentity(withSchemes(config, ['oidc']))).bootstrapKey).toBeUndefined();
      expect(await dataSource.query('SELECT id FROM api_keys')).toEqual([]);
    });

    it('replicas starting together mint one key between them', async () => {
      const outcomes = await Promise.all(
        [1, 2, 3, 4].map(() => services.bootstrap.bootstrapIdentity(withSchemes(config, ['apiKey']))),
      );
      expect(outcomes.filter((o) => o.bootstrapKey)).toHaveLength(1);
      expect(outcomes.flatMap((o) => o.createdNamespaces)).toEqual(['acme', 'acme/platform']);
      expect(await dataSource.query('SELECT name FROM api_keys')).toEqual([{ name: 'bootstrap' }]);
    });
  });

  describe('in the Nest application', () => {
    let database: TestDatabase;
    let stderr: string[];
    let app: INestApplicationContext | undefined;

    beforeAll(async () => {
      database = await target.create();
    });
    afterAll(async () => {
      await database.cleanup();
    });
    beforeEach(() => {
      stderr = [];
      jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
        stderr.push(String(chunk));
        return true;
      });
    });
    afterEach(async () => {
      await app?.close();
      app = undefined;
      jest.restoreAllMocks();
    });

    async function start(): Promise<INestApplicationContext> {
      const config = withSchemes(database.config({ CLEVERAGENTS_MIGRATE_ON_START: 'true' }), ['apiKey']);
      // Only what the auth module says it uses: the namespaces (MembershipDirectory), which import the rest.
      const memberships = NamespaceModule.forRoot({ builtins: RegistryModule });
      const moduleRef = await Test.createTestingModule({
        imports: [
          ConfigModule.forRoot(config),
          DatabaseModule.forRoot({ entities: ENTITIES }),
          AuthModule.forRoot(config, { memberships }),
          memberships,
        ],
      }).compile();
      moduleRef.useLogger(false);
      app = await moduleRef.init();
      return app;
    }

    it('prints the bootstrap key once on stderr when the first start serves, nothing at the next', async () => {
      const first = await start();
      // Application start makes the namespaces; the key waits until the server serves (main.ts, stdio.ts).
      expect(stderr.join('')).toBe('');
      expect(await first.get(DataSource).query('SELECT id FROM api_keys')).toEqual([]);
      await first.get(BootstrapService).announceBootstrapKey();
      const printed = stderr.join('');
      const keys = printed.match(KEY_IN_TEXT) ?? [];
      expect(keys).toHaveLength(1);
      expect(printed).toContain('will NOT be shown again');
      // A command that runs from a checkout and from the image (WORKDIR /app), where the bin is not on PATH.
      expect(printed).toContain('npm run admin -- apikey create --name <name>');
      expect(await first.get(ApiKeyVerifier).verify(keys[0]!)).toMatchObject({ role: 'owner', namespace: 'default' });
      // The ports the auth module injects are these services.
      expect(first.get(ApiKeyVerifier)).toBe(first.get(ApiKeyService));
      expect(first.get(MembershipDirectory)).toBeInstanceOf(NamespaceMembershipDirectory);
      await first.close();
      app = undefined;

      stderr.length = 0;
      await (await start()).get(BootstrapService).announceBootstrapKey();
      expect(stderr.join('')).toBe('');
    });
  });
});
