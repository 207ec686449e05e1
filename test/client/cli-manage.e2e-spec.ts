import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EXIT } from '../../packages/cli/src/exit-codes.js';
import { ANSI, cliHome, expectExit, runCli, terminalEnv, type CliHome, type CliRun } from '../support/cli.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { keyedCalls, startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { wireMessageV1 } from '../factories/messages.js';
import { CLI_BIN, KEYS, TerminalSession, assertCliBuilt } from '../support/terminal.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * `cleveragents namespaces | members | keys | audit` (and `namespaces usage`) against a server that requires API keys, the CLI
 * run as a child process with the caller's own key: the bootstrap key (owner of `default`) mints an
 * admin, a member and a viewer key through the CLI, then every command runs with each of the four,
 * refused (exact message and exit code) where the role does not allow it, and what it changed read
 * back from the server. One pty run checks the table on a terminal and the delete confirmation.
 */

type Who = 'owner' | 'admin' | 'member' | 'viewer';
const WHO: Who[] = ['owner', 'admin', 'member', 'viewer'];

/** A refusal for want of a role: exit 3, the server's message, the hint naming the role needed and held. */
function expectRoleRequired(run: CliRun, operation: string, namespace: string, required: Who, held: Who): void {
  expectExit(run, EXIT.AUTH);
  expect(run.stdout).toBe('');
  expect(run.stderr).toBe(
    `error: _cleveragents/${operation} requires the ${required} role in namespace ${namespace}; the caller holds ${held} (ROLE_REQUIRED, code -32003)\n` +
      `hint: this needs the ${required} role in namespace ${namespace}; your credential holds ${held}\n`,
  );
}

const target = databaseTargets().at(-1)!;

describe(`cleveragents namespaces, members, keys and audit (${target.kind} database)`, () => {
  let db: TestDatabase;
  let server: TestServer;
  let home: CliHome;
  const keys = {} as Record<Who, { key: string; id: string }>;

  const as = (who: Who, ...args: string[]): Promise<CliRun> =>
    runCli(['--server', server.baseUrl, '--api-key', keys[who].key, ...args], { home });
  /** A `--json` run that must succeed: its stdout parsed. */
  const json = async (who: Who, ...args: string[]): Promise<any> => {
    const run = await as(who, '--json', ...args);
    expectExit(run, EXIT.OK);
    expect(run.stdout.trim().split('\n')).toHaveLength(1);
    return JSON.parse(run.stdout);
  };

  beforeAll(async () => {
    assertCliBuilt();
    home = await cliHome();
    db = await target.create();
    const started = await startServerWithBootstrapKey(db);
    server = started.server;
    keys.owner = { key: started.bootstrapKey, id: '' };
  }, 90000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(home)?.cleanup();
  });

  describe('keys', () => {
    it('create prints the secret once, alone on the last line of stdout; --json gives it as a field', async () => {
      const human = await as('owner', 'keys', 'create', '--name', 'admin-key', '--role', 'admin');
      expectExit(human, EXIT.OK);
      const lines = human.stdout.trimEnd().split('\n');
      const secret = lines.at(-1)!;
      expect(secret).toMatch(/^ca_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/);
      expect(lines.at(-2)).toBe('');
      expect(lines).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^id: +[0-9A-Z]{26}$/),
          expect.stringMatching(/^name: +admin-key$/),
          expect.stringMatching(/^namespace: +default$/),
          expect.stringMatching(/^role: +admin$/),
          expect.stringMatching(/^expires: +never$/),
        ]),
      );
      expect(human.stdout.split(secret)).toHaveLength(2);
      expect(human.stderr).not.toContain(secret);
      expect(human.stderr).toContain('The key is shown this once (only its hash is kept): store it now.');
      expect(human.stdout).not.toMatch(ANSI);
      keys.admin = { key: secret, id: /^id: +(\S+)$/m.exec(human.stdout)![1] };

      for (const who of ['member', 'viewer'] as const) {
        const run = await as('owner', '--json', 'keys', 'create', '--name', `${who}-key`, '--role', who);
        expectExit(run, EXIT.OK);
        expect(run.stderr).not.toContain('ca_');
        const created = JSON.parse(run.stdout);
        expect(created).toEqual({
          key: expect.stringMatching(/^ca_[0-9a-z]{26}_/),
          id: expect.stringMatching(/^[0-9A-Z]{26}$/),
          name: `${who}-key`,
          namespace: 'default',
          role: who,
          createdAt: expect.any(String),
          expiresAt: null,
        });
        keys[who] = { key: created.key, id: created.id };
      }

      const listed = await json('owner', 'keys', 'list');
      const byName = Object.fromEntries(listed.items.map((k: any) => [k.name, k]));
      keys.owner.id = byName.bootstrap.id;
      expect(listed.totalSize).toBe(4);
      for (const who of WHO.slice(1)) {
        expect(byName[`${who}-key`]).toMatchObject({ id: keys[who].id, role: who, status: 'active' });
      }
      expect(JSON.stringify(listed)).not.toContain(keys.admin.key);
      // Each new key authenticates, with its own role.
      for (const who of WHO) {
        expect(await json(who, 'namespaces', 'get', 'default')).toMatchObject({ namespace: 'default' });
      }
    });

    it('create, list and revoke: allowed to an owner and an admin, refused to a member and a viewer', async () => {
      for (const who of ['member', 'viewer'] as const) {
        const created = await as(who, 'keys', 'create', '--name', `by-${who}`, '--role', 'viewer');
        expectRoleRequired(created, 'auth/apikey/create', 'default', 'admin', who);
        expectRoleRequired(await as(who, 'keys', 'list'), 'auth/apikey/list', 'default', 'admin', who);
        // By its id alone, a key the caller may not manage is not found (as an unknown id is); with the
        // namespace named, the role is checked there first.
        const byId = await as(who, 'keys', 'revoke', keys.viewer.id);
        expectExit(byId, EXIT.FAILED);
        expect(byId.stderr.split('\n')[0]).toBe(
          `error: No API key ${keys.viewer.id} that you may manage (KEY_NOT_FOUND, code -32001)`,
        );
        expectRoleRequired(
          await as(who, 'keys', 'revoke', '--namespace', 'default', keys.viewer.id),
          'auth/apikey/revoke',
          'default',
          'admin',
          who,
        );
      }
      const refusedJson = await as('viewer', '--json', 'keys', 'list');
      expectExit(refusedJson, EXIT.AUTH);
      expect(JSON.parse(refusedJson.stdout)).toEqual({
        error: {
          code: -32003,
          reason: 'ROLE_REQUIRED',
          message:
            '_cleveragents/auth/apikey/list requires the admin role in namespace default; the caller holds viewer',
          fieldViolations: [],
          hint: 'this needs the admin role in namespace default; your credential holds viewer',
          exitCode: EXIT.AUTH,
        },
      });

      // An admin mints no key stronger than itself.
      const escalation = await as('admin', 'keys', 'create', '--name', 'too-strong', '--role', 'owner');
      expectExit(escalation, EXIT.AUTH);
      expect(escalation.stderr).toMatch(
        /^error: A key with the owner role needs that role in namespace default; the caller holds admin \(ROLE_ESCALATION, code -32003\)$/m,
      );

      for (const who of ['owner', 'admin'] as const) {
        const created = await json(who, 'keys', 'create', '--name', `by-${who}`, '--role', 'viewer');
        const list = await as(who, 'keys', 'list');
        expectExit(list, EXIT.OK);
        expect(list.stdout.split('\n')[0]).toMatch(/^ID +NAME +ROLE +STATUS +NAMESPACE +CREATED +EXPIRES +LAST USED$/);
        expect(list.stdout).toMatch(new RegExp(`^${created.id} +by-${who} +viewer +active +default `, 'm'));
        const revoked = await as(who, 'keys', 'revoke', created.id);
        expectExit(revoked, EXIT.OK);
        expect(revoked.stdout).toBe(
          `Revoked key ${created.id} (by-${who}, viewer of default); it no longer authenticates\n`,
        );
        // The server refuses the revoked key from then on.
        const after = await runCli(['--server', server.baseUrl, '--api-key', created.key, 'namespaces', 'list'], {
          home,
        });
        expectExit(after, EXIT.AUTH);
        expect(after.stderr).toContain('hint: the server did not accept the API key (wrong, revoked or expired)');
        const active = await json(who, 'keys', 'list');
        expect(active.items.map((k: any) => k.id)).not.toContain(created.id);
        const all = await json(who, 'keys', 'list', '--include-revoked');
        expect(all.items.find((k: any) => k.id === created.id)).toMatchObject({
          status: 'revoked',
          revokedBy: `apikey:${keys[who].id}`,
        });
      }
    });

    it("revoke: an admin may not revoke an owner's key; twice, unknown and malformed ids are refused", async () => {
      const ownerOwned = await json('owner', 'keys', 'create', '--name', 'spare-owner', '--role', 'owner');
      const byAdmin = await as('admin', 'keys', 'revoke', ownerOwned.id);
      expectExit(byAdmin, EXIT.AUTH);
      expect(byAdmin.stderr.split('\n')[0]).toBe(
        "error: Only an owner of namespace default may revoke an owner's API key (OWNER_REQUIRED, code -32003)",
      );
      await json('owner', 'keys', 'revoke', ownerOwned.id);
      const twice = await as('owner', 'keys', 'revoke', ownerOwned.id);
      expectExit(twice, EXIT.FAILED);
      expect(twice.stderr.split('\n')[0]).toBe(
        `error: API key ${ownerOwned.id} is already revoked (ALREADY_REVOKED, code -32004)`,
      );
      const unknown = await as('owner', 'keys', 'revoke', '01ARZ3NDEKTSV4RRFFQ69G5FAV');
      expectExit(unknown, EXIT.FAILED);
      expect(unknown.stderr).toMatch(/\(KEY_NOT_FOUND, code -32001\)$/m);
      const malformed = await as('owner', 'keys', 'revoke', 'not-an-id');
      expectExit(malformed, EXIT.USAGE);
      expect(malformed.stderr).toMatch(/^error: .*\(INVALID_PARAMS, code -32602\)\n {2}id: .+\nhint: fix id\n$/);
      const expires = await as('owner', 'keys', 'create', '--name', 'x', '--role', 'viewer', '--expires', 'tomorrow');
      expectExit(expires, EXIT.USAGE);
      expect(expires.stderr).toBe(
        'error: --expires must be an ISO 8601 date or instant, such as 2030-01-31T12:00:00Z (got "tomorrow")\n',
      );
      const dated = await json(
        'owner',
        'keys',
        'create',
        '--name',
        'dated',
        '--role',
        'viewer',
        '--expires',
        '2031-02-03',
      );
      expect(dated.expiresAt).toBe('2031-02-03T00:00:00.000Z');
      const badRole = await as('owner', 'keys', 'create', '--name', 'x', '--role', 'root');
      expectExit(badRole, EXIT.USAGE);
      expect(badRole.stderr).toContain(
        "error: option '--role <role>' argument 'root' is invalid. Allowed choices are owner, admin, member, viewer.",
      );
    });
  });

  describe('namespaces', () => {
    it('create: an owner or admin of default creates top-level namespaces; a member and a viewer are refused', async () => {
      for (const who of ['member', 'viewer'] as const) {
        expectRoleRequired(
          await as(who, 'namespaces', 'create', `ns-${who}`),
          'namespace/create',
          'default',
          'admin',
          who,
        );
      }
      const created = await as(
        'admin',
        'namespaces',
        'create',
        'acme',
        '--display-name',
        'ACME Corp',
        '--description',
        'the tenant',
      );
      expectExit(created, EXIT.OK);
      expect(created.stdout).toMatch(
        /^Created namespace acme\nnamespace: +acme\nparent: +—\ndisplay name: +ACME Corp\n/,
      );
      expect(created.stdout).toContain(`by apikey:${keys.admin.id}`);
      const owned = await json('owner', 'namespaces', 'create', 'ns-owner');
      expect(owned).toMatchObject({ namespace: 'ns-owner', parent: null, displayName: 'ns-owner', revision: 1 });
      // The admin key created acme, so it is acme's owner member: it may create below it.
      expect(await json('admin', 'namespaces', 'create', 'acme/web')).toMatchObject({ parent: 'acme' });

      const duplicate = await as('owner', 'namespaces', 'create', 'ns-owner');
      expectExit(duplicate, EXIT.FAILED);
      expect(duplicate.stderr).toMatch(/\(NAMESPACE_EXISTS, code -32005\)$/m);
      const invalid = await as('owner', 'namespaces', 'create', 'Not A Slug');
      expectExit(invalid, EXIT.USAGE);
      expect(invalid.stderr).toMatch(/\(INVALID_PARAMS, code -32602\)\n {2}namespace: .+\nhint: fix namespace\n$/);
      const orphan = await as('owner', 'namespaces', 'create', 'ghost/child');
      expectExit(orphan, EXIT.FAILED);
      expect(orphan.stderr.split('\n')[0]).toBe('error: Namespace not found: ghost (NAMESPACE_NOT_FOUND, code -32001)');
    });

    it('list and get: each key sees the namespaces it holds a role in, with those below them', async () => {
      const seen = async (who: Who) => ((await json(who, 'namespaces', 'list')).items as any[]).map((n) => n.namespace);
      expect(await seen('admin')).toEqual(['acme', 'acme/web', 'default']);
      expect(await seen('owner')).toEqual(['default', 'ns-owner']);
      expect(await seen('member')).toEqual(['default']);
      expect(await seen('viewer')).toEqual(['default']);

      const table = await as('admin', 'namespaces', 'list');
      expectExit(table, EXIT.OK);
      const rows = table.stdout.trimEnd().split('\n');
      expect(rows[0]).toMatch(/^NAMESPACE +DISPLAY NAME +REVISION +CREATED BY +DESCRIPTION$/);
      expect(rows[1]).toMatch(new RegExp(`^acme +ACME Corp +1 +apikey:${keys.admin.id} +the tenant$`));
      const paged = await as('admin', 'namespaces', 'list', '--limit', '2');
      expect(paged.stdout.trimEnd().split('\n')).toHaveLength(3);
      const token = /--page-token (\S+)$/m.exec(paged.stderr)?.[1];
      expect(paged.stderr).toContain('2 of 3 shown');
      const rest = await json('admin', 'namespaces', 'list', '--limit', '2', '--page-token', token!);
      expect(rest).toMatchObject({ items: [{ namespace: 'default' }], nextPageToken: '', totalSize: 3 });

      const got = await as('viewer', 'namespaces', 'get', 'default');
      expectExit(got, EXIT.OK);
      expect(got.stdout).toMatch(/^namespace: +default\nparent: +—\n/);
      // A namespace the key holds no role in is answered as one that does not exist.
      const hidden = await as('viewer', 'namespaces', 'get', 'acme');
      expectExit(hidden, EXIT.FAILED);
      expect(hidden.stderr).toBe(
        'error: Namespace not found: acme (NAMESPACE_NOT_FOUND, code -32001)\nhint: it does not exist, or your credential cannot see it\n',
      );
    });

    it('update: an owner and an admin change it; a member and a viewer are refused; stale revisions conflict', async () => {
      for (const who of ['member', 'viewer'] as const) {
        const run = await as(who, 'namespaces', 'update', 'default', '--description', `by ${who}`);
        expectRoleRequired(run, 'namespace/update', 'default', 'admin', who);
      }
      const first = await as('owner', 'namespaces', 'update', 'default', '--description', 'by owner');
      expectExit(first, EXIT.OK);
      expect(first.stdout).toMatch(/^Updated namespace default \(revision \d+\)\n$/);
      const revision = Number(/revision (\d+)/.exec(first.stdout)![1]);
      const second = await json(
        'admin',
        'namespaces',
        'update',
        'default',
        '--display-name',
        'Default',
        '--expected-revision',
        String(revision),
      );
      expect(second).toMatchObject({ displayName: 'Default', description: 'by owner', revision: revision + 1 });
      expect(await json('viewer', 'namespaces', 'get', 'default')).toMatchObject({
        displayName: 'Default',
        revision: revision + 1,
      });
      const stale = await as(
        'admin',
        'namespaces',
        'update',
        'default',
        '--description',
        'x',
        '--expected-revision',
        String(revision),
      );
      expectExit(stale, EXIT.FAILED);
      expect(stale.stderr).toMatch(/\(REVISION_CONFLICT, code -32004\)$/m);
      const nothing = await as('admin', 'namespaces', 'update', 'default');
      expectExit(nothing, EXIT.USAGE);
      expect(nothing.stderr).toBe('error: Nothing to change\nhint: pass --display-name and/or --description\n');
    });

    it('delete: needs --yes off a terminal; only an owner may; a namespace must be empty, default stays', async () => {
      const unconfirmed = await as('owner', 'namespaces', 'delete', 'ns-owner');
      expectExit(unconfirmed, EXIT.USAGE);
      expect(unconfirmed.stderr).toBe(
        'error: Not deleting namespace ns-owner without confirmation\nhint: pass --yes to delete it when not on a terminal\n',
      );
      expect(await json('owner', 'namespaces', 'get', 'ns-owner')).toMatchObject({ namespace: 'ns-owner' });

      for (const who of ['admin', 'member', 'viewer'] as const) {
        expectRoleRequired(
          await as(who, 'namespaces', 'delete', 'default', '--yes'),
          'namespace/delete',
          'default',
          'owner',
          who,
        );
      }
      const notEmpty = await as('admin', 'namespaces', 'delete', 'acme', '--yes');
      expectExit(notEmpty, EXIT.FAILED);
      expect(notEmpty.stderr).toMatch(/\(NAMESPACE_NOT_EMPTY, code -32004\)$/m);
      const theDefault = await as('owner', 'namespaces', 'delete', 'default', '--yes');
      expectExit(theDefault, EXIT.FAILED);
      expect(theDefault.stderr).toMatch(/\(DEFAULT_NAMESPACE, code -32004\)$/m);

      const deleted = await as('owner', 'namespaces', 'delete', 'ns-owner', '--yes');
      expectExit(deleted, EXIT.OK);
      expect(deleted.stdout).toBe('Deleted namespace ns-owner\n');
      expect(await json('admin', 'namespaces', 'delete', 'acme/web', '--yes')).toEqual({
        namespace: 'acme/web',
        deleted: true,
      });
      const owners = (await json('owner', 'namespaces', 'list')).items.map((n: any) => n.namespace);
      expect(owners).toEqual(['default']);
      const gone = await as('admin', 'namespaces', 'get', 'acme/web');
      expectExit(gone, EXIT.FAILED);
    });
  });

  describe('members', () => {
    it('set and remove: an admin grants up to admin, only an owner grants owner, the last owner stays; a member and a viewer are refused', async () => {
      for (const who of ['member', 'viewer'] as const) {
        const set = await as(who, 'members', 'set', 'oidc:bob', '--role', 'viewer');
        expectRoleRequired(set, 'namespace/members/set', 'default', 'admin', who);
        const removed = await as(who, 'members', 'remove', 'oidc:bob', '--namespace', 'default');
        expectRoleRequired(removed, 'namespace/members/remove', 'default', 'admin', who);
      }
      // No --namespace: the key's default namespace.
      const set = await as('admin', 'members', 'set', 'oidc:bob', '--role', 'member');
      expectExit(set, EXIT.OK);
      expect(set.stdout).toBe('oidc:bob is member of default (revision 1)\n');
      const listed = await json('viewer', 'members', 'list');
      expect(listed.items).toEqual([
        expect.objectContaining({
          namespace: 'default',
          subject: 'oidc:bob',
          role: 'member',
          createdBy: `apikey:${keys.admin.id}`,
        }),
      ]);
      for (const who of WHO) {
        expect((await json(who, 'members', 'list', '--namespace', 'default')).items).toEqual(listed.items);
      }

      const toOwner = await as('admin', 'members', 'set', 'oidc:bob', '--role', 'owner');
      expectExit(toOwner, EXIT.AUTH);
      expect(toOwner.stderr).toMatch(/\(OWNER_REQUIRED, code -32003\)$/m);
      expect(
        await json('owner', 'members', 'set', 'oidc:bob', '--role', 'owner', '--namespace', 'default'),
      ).toMatchObject({
        role: 'owner',
        revision: 2,
      });
      await json('admin', 'members', 'set', 'oidc:carol', '--role', 'viewer');
      const table = await as('member', 'members', 'list', '--namespace', 'default');
      expectExit(table, EXIT.OK);
      const rows = table.stdout.trimEnd().split('\n');
      expect(rows[0]).toMatch(/^SUBJECT +ROLE +SINCE +ADDED BY$/);
      expect(rows.slice(1).map((r) => r.split(/ +/).slice(0, 2))).toEqual([
        ['oidc:bob', 'owner'],
        ['oidc:carol', 'viewer'],
      ]);

      await json('admin', 'members', 'set', 'oidc:erin', '--role', 'admin');
      const adminRemoves = await as('admin', 'members', 'remove', 'oidc:erin');
      expectExit(adminRemoves, EXIT.OK);
      expect(adminRemoves.stdout).toBe('Removed oidc:erin from default\n');
      expect((await json('owner', 'members', 'list')).items.map((m: any) => m.subject)).toEqual([
        'oidc:bob',
        'oidc:carol',
      ]);

      const adminRemovesOwner = await as('admin', 'members', 'remove', 'oidc:bob');
      expectExit(adminRemovesOwner, EXIT.AUTH);
      expect(adminRemovesOwner.stderr).toMatch(/\(OWNER_REQUIRED, code -32003\)$/m);
      // The bootstrap key is owner by its key, not as a member: bob is the last owner member of default.
      const last = await as('owner', 'members', 'remove', 'oidc:bob');
      expectExit(last, EXIT.FAILED);
      expect(last.stderr).toBe(
        'error: oidc:bob is the last owner of namespace default; make another member owner first (LAST_OWNER, code -32004)\n',
      );
      await json('owner', 'members', 'set', 'oidc:carol', '--role', 'owner');
      const removed = await as('owner', 'members', 'remove', 'oidc:bob');
      expectExit(removed, EXIT.OK);
      expect(removed.stdout).toBe('Removed oidc:bob from default\n');
      expect((await json('viewer', 'members', 'list')).items).toEqual([
        expect.objectContaining({ subject: 'oidc:carol', role: 'owner', revision: 2 }),
      ]);
      const again = await as('owner', 'members', 'remove', 'oidc:bob');
      expectExit(again, EXIT.FAILED);
      expect(again.stderr).toMatch(/\(MEMBER_NOT_FOUND, code -32001\)$/m);
    });

    it('a member set takes effect: the viewer key made admin of acme then administers it', async () => {
      const subject = `apikey:${keys.viewer.id}`;
      const before = await as('viewer', 'members', 'list', '--namespace', 'acme');
      expectExit(before, EXIT.FAILED);
      expect(before.stderr.split('\n')[0]).toBe('error: Namespace not found: acme (NAMESPACE_NOT_FOUND, code -32001)');
      await json('admin', 'members', 'set', subject, '--role', 'admin', '--namespace', 'acme');
      const members = await json('viewer', 'members', 'list', '--namespace', 'acme');
      expect(members.items.map((m: any) => [m.subject, m.role])).toEqual([
        [`apikey:${keys.admin.id}`, 'owner'],
        [subject, 'admin'],
      ]);
      expect(await json('viewer', 'namespaces', 'update', 'acme', '--description', 'by the viewer key')).toMatchObject({
        description: 'by the viewer key',
      });
    });

    it('keys revoke ID, exactly as keys create prints it, finds a key of another namespace than the default', async () => {
      // The viewer key is admin of acme (above) and a viewer of its default namespace.
      const created = await as(
        'viewer',
        'keys',
        'create',
        '--namespace',
        'acme',
        '--name',
        'acme-ci',
        '--role',
        'member',
      );
      expectExit(created, EXIT.OK);
      const hint = /revoke it with (cleveragents .+)$/m.exec(created.stderr);
      expect(hint?.[1]).toMatch(/^cleveragents --server \S+ keys revoke [0-9A-Z]{26}$/);
      const words = hint![1].split(' ');
      const id = words.at(-1)!;
      // A key id that exists nowhere, and this key to a caller who may not manage acme's keys: one answer.
      const unknown = await as('member', 'keys', 'revoke', '01ARZ3NDEKTSV4RRFFQ69G5FAV');
      const foreign = await as('member', 'keys', 'revoke', id);
      for (const [run, asked] of [
        [unknown, '01ARZ3NDEKTSV4RRFFQ69G5FAV'],
        [foreign, id],
      ] as const) {
        expectExit(run, EXIT.FAILED);
        expect(run.stderr.replace(asked, 'ID')).toBe(
          'error: No API key ID that you may manage (KEY_NOT_FOUND, code -32001)\nhint: it does not exist, or your credential cannot see it\n',
        );
      }
      // The hint's command, as printed (with the viewer key, the admin of acme).
      const revoked = await as('viewer', ...words.slice(3));
      expectExit(revoked, EXIT.OK);
      expect(revoked.stdout).toBe(`Revoked key ${id} (acme-ci, member of acme); it no longer authenticates\n`);
    });

    it('refuses a malformed subject naming the field, and an unknown role before calling the server', async () => {
      const malformed = await as('admin', 'members', 'set', 'bob', '--role', 'member');
      expectExit(malformed, EXIT.USAGE);
      expect(malformed.stderr).toMatch(/\(INVALID_PARAMS, code -32602\)\n {2}subject: .+\nhint: fix subject\n$/);
      const role = await as('admin', 'members', 'set', 'oidc:x', '--role', 'root');
      expectExit(role, EXIT.USAGE);
      expect(role.stderr).toContain("argument 'root' is invalid. Allowed choices are owner, admin, member, viewer.");
      const missing = await as('admin', 'members', 'set', 'oidc:x');
      expectExit(missing, EXIT.USAGE);
      expect(missing.stderr).toContain("error: required option '--role <role>' not specified");
    });
  });

  describe('audit', () => {
    it('list: refused to a member and a viewer; shows an admin what was just done, filtered and paged', async () => {
      for (const who of ['member', 'viewer'] as const) {
        expectRoleRequired(await as(who, 'audit', 'list'), 'audit/list', 'default', 'admin', who);
      }
      const page = await json('admin', 'audit', 'list', '--limit', '100');
      const actions = page.items.map((r: any) => `${r.action} ${r.actor} ${r.target}`);
      // Newest first: the last two member changes in default (the members tests).
      expect(actions.slice(0, 2)).toEqual([
        `member.remove apikey:${keys.owner.id} oidc:bob`,
        `member.set apikey:${keys.owner.id} oidc:carol`,
      ]);
      expect(actions).toEqual(
        expect.arrayContaining([
          `member.set apikey:${keys.admin.id} oidc:bob`,
          `apikey.create apikey:${keys.owner.id} ${keys.viewer.id}`,
          `namespace.update apikey:${keys.owner.id} default`,
          `namespace.update apikey:${keys.admin.id} default`,
        ]),
      );
      expect(JSON.stringify(page)).not.toContain(keys.viewer.key);

      const revocations = await json(
        'owner',
        'audit',
        'list',
        '--actor',
        `apikey:${keys.owner.id}`,
        '--action',
        'apikey.revoke',
      );
      expect(revocations.items.length).toBe(2);
      expect(
        revocations.items.every((r: any) => r.action === 'apikey.revoke' && r.actor === `apikey:${keys.owner.id}`),
      ).toBe(true);

      const first = await json('admin', 'audit', 'list', '--limit', '2');
      expect(first.items).toHaveLength(2);
      expect(first.nextPageToken).not.toBe('');
      const second = await json('admin', 'audit', 'list', '--limit', '2', '--page-token', first.nextPageToken);
      expect(second.items.map((r: any) => r.id)).toEqual(page.items.slice(2, 4).map((r: any) => r.id));

      const table = await as('admin', 'audit', 'list', '--limit', '3');
      expectExit(table, EXIT.OK);
      const rows = table.stdout.trimEnd().split('\n');
      expect(rows[0]).toMatch(/^AT +ACTOR +ACTION +TARGET +DETAILS$/);
      expect(rows[1]).toMatch(
        new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ +apikey:${keys.owner.id} +member.remove +oidc:bob`),
      );
      expect(rows).toHaveLength(4);
      expect(table.stderr).toContain(`3 of ${page.totalSize} shown; the next page: --page-token `);

      const acme = await json('admin', 'audit', 'list', '--namespace', 'acme', '--action', 'namespace.create');
      expect(acme.items).toEqual([expect.objectContaining({ actor: `apikey:${keys.admin.id}`, target: 'acme' })]);
      const badAction = await as('admin', 'audit', 'list', '--action', 'Not An Action');
      expectExit(badAction, EXIT.USAGE);
      expect(badAction.stderr).toMatch(/\(INVALID_PARAMS, code -32602\)\n {2}action: .+\nhint: fix action\n$/);
      // A time range: the records from the newest one's instant on, none before the oldest; a reversed range is refused.
      const newest = page.items[0];
      const fromNewest = await json('admin', 'audit', 'list', '--since', newest.at, '--limit', '100');
      expect(fromNewest.items.length).toBeGreaterThanOrEqual(1);
      expect(fromNewest.items.every((r: any) => r.at >= newest.at)).toBe(true);
      expect(fromNewest.items.map((r: any) => r.id)).toContain(newest.id);
      const oldest = page.items.at(-1);
      const beforeOldest = await json('admin', 'audit', 'list', '--until', oldest.at, '--limit', '100');
      expect(beforeOldest.items.map((r: any) => r.id)).not.toContain(oldest.id);
      const reversed = await as('admin', 'audit', 'list', '--since', newest.at, '--until', oldest.at);
      expectExit(reversed, EXIT.USAGE);
      expect(reversed.stderr).toMatch(/\(INVALID_PARAMS, code -32602\)\n {2}until: until must be after since/);
      const badSince = await as('admin', 'audit', 'list', '--since', 'yesterday');
      expectExit(badSince, EXIT.USAGE);
      expect(badSince.stderr).toMatch(/ {2}since: since must be an ISO 8601 instant/);
      const badLimit = await as('admin', 'audit', 'list', '--limit', '0');
      expectExit(badLimit, EXIT.USAGE);
      expect(badLimit.stderr).toBe('error: --limit must be a whole number from 1 to 100, not "0"\n');
    });
  });

  describe('namespaces usage', () => {
    it("refused to a member; shows an admin the namespace's totals and a table by actor and by owner", async () => {
      expectRoleRequired(await as('member', 'namespaces', 'usage'), 'namespace/usage', 'default', 'admin', 'member');
      // A session of the member's with one task, so that both tables have a row.
      const rpc = keyedCalls(() => server);
      const { sessionId } = await rpc.ok(keys.member.key, 'session/create', {});
      const sent = await rpc.rpc(keys.member.key, 'SendMessage', {
        message: wireMessageV1('tck-complete-task', 'hello', { contextId: sessionId }),
      });
      expect(sent.json.error).toBeUndefined();

      const report = await json('admin', 'namespaces', 'usage', 'default', '--since', '2020-01-01');
      expect(report).toEqual(
        await rpc.ok(keys.admin.key, 'namespace/usage', { namespace: 'default', since: '2020-01-01' }),
      );
      expect(report.byOwner.map((o: any) => o.owner)).toContain(`apikey:${keys.member.id}`);
      const mine = report.byOwner.find((o: any) => o.owner === `apikey:${keys.member.id}`);
      expect(mine).toMatchObject({ sessions: 1, tasks: 1 });

      const text = await as('admin', 'namespaces', 'usage', '--since', '2020-01-01');
      expectExit(text, EXIT.OK);
      const lines = text.stdout.trimEnd().split('\n');
      expect(lines.slice(0, 3)).toEqual([
        'namespace:  default',
        'window:     sessions created from 2020-01-01T00:00:00Z',
        `sessions:   ${report.totals.sessions} (${report.totals.tasks} tasks)`,
      ]);
      expect(lines).toContain(`tokens:     ${report.totals.tokens}`);
      expect(lines.find((l) => l.startsWith('ACTOR '))).toMatch(
        /^ACTOR +SESSIONS +TASKS +TOKENS +TOOL CALLS +WALL TIME$/,
      );
      expect(lines.find((l) => l.startsWith('OWNER '))).toMatch(
        /^OWNER +SESSIONS +TASKS +TOKENS +TOOL CALLS +WALL TIME$/,
      );
      expect(lines.find((l) => l.startsWith(`apikey:${keys.member.id} `))).toMatch(
        new RegExp(`^apikey:${keys.member.id} +1 +1 +${mine.tokens} +${mine.toolCalls} +\\S+`),
      );
      expect(text.stdout).not.toMatch(ANSI);
    });

    it('a bad --since is a usage error naming it; nothing is printed on stdout', async () => {
      const run = await as('admin', 'namespaces', 'usage', '--since', 'soon');
      expectExit(run, EXIT.USAGE);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('since must be an ISO 8601 instant');
    });
  });

  describe('on a terminal', () => {
    const onTerminal = (who: Who, ...args: string[]): TerminalSession =>
      TerminalSession.start(
        process.execPath,
        [CLI_BIN, '--server', server.baseUrl, '--api-key', keys[who].key, ...args],
        { cwd: home.dir, env: terminalEnv(home) },
      );

    async function exitOf(session: TerminalSession): Promise<number> {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no exit; the screen shows:\n${session.text()}`)), 60000);
      });
      try {
        return (await Promise.race([session.exited, late])).exitCode;
      } finally {
        clearTimeout(timer);
      }
    }

    it('a table in colour, and delete asks first: no keeps the namespace (exit 5), yes deletes it', async () => {
      const list = onTerminal('owner', 'keys', 'list');
      try {
        expect(await exitOf(list)).toBe(EXIT.OK);
        await list.waitFor('LAST USED');
        const lines = list.text().split('\n');
        expect(lines[0]).toMatch(/^ID +NAME +ROLE +STATUS +NAMESPACE +CREATED +EXPIRES +LAST USED$/);
        expect(lines).toEqual(
          expect.arrayContaining([
            expect.stringMatching(new RegExp(`^${keys.viewer.id} +viewer-key +viewer +active +default `)),
          ]),
        );
        expect(list.output).toMatch(ANSI);
      } finally {
        list.kill();
      }

      await json('owner', 'namespaces', 'create', 'doomed', '--display-name', 'Doomed');
      const kept = onTerminal('owner', 'namespaces', 'delete', 'doomed');
      try {
        await kept.waitFor('Delete namespace doomed (Doomed)? This cannot be undone.');
        kept.write(`n${KEYS.enter}`);
        expect(await exitOf(kept)).toBe(EXIT.CANCELED);
        expect(kept.text()).toContain('Namespace doomed was not deleted.');
      } finally {
        kept.kill();
      }
      expect(await json('owner', 'namespaces', 'get', 'doomed')).toMatchObject({ namespace: 'doomed' });

      const gone = onTerminal('owner', 'namespaces', 'delete', 'doomed');
      try {
        await gone.waitFor('Delete namespace doomed (Doomed)?');
        gone.write(`y${KEYS.enter}`);
        expect(await exitOf(gone)).toBe(EXIT.OK);
        expect(gone.text()).toContain('Deleted namespace doomed');
      } finally {
        gone.kill();
      }
      const after = await as('owner', 'namespaces', 'get', 'doomed');
      expectExit(after, EXIT.FAILED);
    });
  });
});
