import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createDataSource } from '../../packages/server/src/database/data-source.factory.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { freePort, rawCall, startServer, type TestServer } from '../support/server.js';
import { DIST_MAIN } from '../support/stdio-client.js';
import { ENTITIES } from '../../packages/server/src/entities.js';
import { ifAssigned } from '../support/assigned.js';

const ADMIN = fileURLToPath(new URL('../../packages/server/dist/cli/admin.js', import.meta.url));
const KEY_FORMAT = /^ca_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/;
const CLI_SUBJECT = `cli:${userInfo().username}`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout split into lines, without the final empty one. */
  lines: string[];
}

/** Runs `node dist/cli/admin.js <args>` as an operator would, on `env` alone (plus PATH). */
function admin(env: Record<string, string>, args: string[], timeoutMs = 30_000): Promise<Run> {
  if (!existsSync(ADMIN)) throw new Error(`${ADMIN} is missing: run "npm run build" first (npm test does)`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ADMIN, ...args], {
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`cleveragents-admin ${args.join(' ')} ran longer than ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, lines: stdout.replace(/\n$/, '').split('\n') });
    });
  });
}

function whoami(server: TestServer, key: string) {
  return rawCall(
    server.endpoint,
    { jsonrpc: '2.0', id: 1, method: '_cleveragents/auth/whoami', params: {} },
    { 'X-API-Key': key },
  );
}

describe('cleveragents-admin: usage and configuration', () => {
  it('prints help on stdout with the exit codes, and refuses a bad command line with exit 2 and usage on stderr', async () => {
    const help = await admin({}, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('cleveragents-admin apikey create --name N --role R');
    expect(help.stdout).toMatch(/Exit codes:[\s\S]*3 {2}database unavailable[\s\S]*6 {2}pending migrations/);
    const sub = await admin({}, ['apikey', 'revoke', '--help']);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain('Usage: cleveragents-admin apikey revoke <id>');
    const members = await admin({}, ['namespace', 'members', '--help']);
    expect(members.code).toBe(0);
    expect(members.stdout).toContain('Usage:\n  cleveragents-admin namespace members list <slug> [--json]\n');

    // Parsing is unit-tested (src/cli/admin.args.spec.ts); here, one of each kind through the real binary.
    for (const args of [
      [],
      ['frobnicate'],
      ['namespace', 'list', '--bogus'],
      ['apikey', 'create', '--name', 'n', '--role', 'superuser'],
      ['apikey', 'create', '--name', 'n', '--role', 'admin', '--expires', 'next week'],
    ]) {
      const run = await admin({}, args);
      expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(run.stderr).toMatch(/^cleveragents-admin: .+\nUsage/);
    }
  }, 60_000);

  it('exits 2 naming the variable on an invalid configuration, before touching any database', async () => {
    const port = await admin({ PORT: 'abc' }, ['namespace', 'list']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('PORT');
    const url = await admin({ DATABASE_URL: 'mysql://x' }, ['migrate', 'show']);
    expect(url.code).toBe(2);
    expect(url.stderr).toContain('DATABASE_URL');
  });

  it('exits 3 when PostgreSQL does not answer, naming the database without its password', async () => {
    const port = await freePort();
    const run = await admin({ DATABASE_URL: `postgres://postgres:hunter2@127.0.0.1:${port}/nowhere` }, [
      'apikey',
      'list',
    ]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`postgres://postgres@127.0.0.1:${port}/nowhere`);
    expect(run.stderr).not.toContain('hunter2');
  });
});

describe.each(databaseTargets())('cleveragents-admin on $kind', (target) => {
  let db: TestDatabase;
  const cli = (args: string[], env: Record<string, string> = {}) => admin({ ...db.env, ...env }, args);

  // Empty: the first tests are the CLI's migrate commands on a database that has never been migrated.
  beforeAll(async () => {
    db = await target.create({ migrated: false });
  });
  afterAll(async () => {
    await ifAssigned(db)?.cleanup();
  });

  it('on a fresh database: migrate show lists the pending migrations, revert has none to take back, other commands exit 6', async () => {
    const show = await cli(['migrate', 'show']);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/\[ \] InitialSchema\d+/);
    expect(show.stdout).not.toContain('[X]');
    expect(show.stdout).toContain('run `cleveragents-admin migrate run`');
    expect((await cli(['migrate', 'show', '--check'])).code).toBe(6);
    const revert = await cli(['migrate', 'revert']);
    expect({ code: revert.code, stdout: revert.stdout }).toEqual({ code: 5, stdout: '' });
    expect(revert.stderr).toContain('nothing to revert');

    for (const args of [
      ['namespace', 'list'],
      ['apikey', 'list'],
      ['apikey', 'create', '--name', 'n', '--role', 'viewer'],
    ]) {
      const run = await cli(args);
      expect({ args, code: run.code }).toEqual({ args, code: 6 });
      expect(run.stderr).toContain('cleveragents-admin migrate run');
      expect(run.stdout).toBe('');
    }
  }, 90_000);

  it('migrate run applies every migration once; show then marks them applied', async () => {
    const run = await cli(['migrate', 'run']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Applied \d+ migration\(s\)/);
    expect(run.stdout).toMatch(/InitialSchema\d+/);
    const again = await cli(['migrate', 'run']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('No migration is pending');

    const show = await cli(['migrate', 'show', '--json', '--check']);
    expect(show.code).toBe(0);
    const state = JSON.parse(show.stdout) as { pending: number; migrations: { name: string; applied: boolean }[] };
    expect(state.pending).toBe(0);
    expect(state.migrations.length).toBeGreaterThanOrEqual(3);
    expect(state.migrations.every((m) => m.applied)).toBe(true);
  }, 60_000);

  // The command's own part: one migration at a time, its name printed, and run applying them again. Every
  // migration's down() is walked on both databases by test/database/migrations.e2e-spec.ts, in-process.
  it('migrate revert takes back the last two migrations one at a time, and run applies them again', async () => {
    const before = JSON.parse((await cli(['migrate', 'show', '--json'])).stdout) as {
      migrations: { name: string; applied: boolean }[];
    };
    expect(before.migrations.every((m) => m.applied)).toBe(true);
    const lastTwo = before.migrations.map((m) => m.name).slice(-2);
    for (const name of [...lastTwo].reverse()) {
      const revert = await cli(['migrate', 'revert']);
      expect({ code: revert.code, stdout: revert.stdout }).toEqual({
        code: 0,
        stdout: expect.stringContaining(`Reverted migration ${name}`),
      });
    }
    const after = JSON.parse((await cli(['migrate', 'show', '--json'])).stdout) as {
      pending: number;
      migrations: { name: string; applied: boolean }[];
    };
    expect(after.pending).toBe(2);
    expect(after.migrations.filter((m) => !m.applied).map((m) => m.name)).toEqual(lastTwo);
    expect((await cli(['namespace', 'list'])).code).toBe(6);

    const run = await cli(['migrate', 'run']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Applied 2 migration(s)');
    for (const name of lastTwo) expect(run.stdout).toContain(name);
    expect((await cli(['migrate', 'show', '--check'])).code).toBe(0);
  }, 120_000);

  it('namespace create and list; a duplicate exits 5, a bad slug 2, a missing parent 4', async () => {
    const created = await cli(['namespace', 'create', 'acme', '--display-name', 'ACME Corp', '--description', 'tests']);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('Created namespace acme');
    // The default namespace's keys (the bootstrap key) do not reach a top-level namespace: say who does and how.
    expect(created.stdout).toContain("It has no member yet, and roles held in other namespaces (the bootstrap key's");
    expect(created.stdout).toContain('namespace members set acme --subject apikey:<id> --role owner');
    const child = await cli(['namespace', 'create', 'acme/platform']);
    expect(child.code).toBe(0);
    expect(child.stdout).toContain('It has no member of its own: roles held in acme (and above) hold here too.');
    expect(child.stdout).toContain('apikey create --name <name> --role <role> --namespace acme/platform');

    const duplicate = await cli(['namespace', 'create', 'acme']);
    expect(duplicate.code).toBe(5);
    expect(duplicate.stderr).toContain('acme');
    const bad = await cli(['namespace', 'create', 'Not_A_Slug']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('slug');
    const orphan = await cli(['namespace', 'create', 'nowhere/child']);
    expect(orphan.code).toBe(4);
    expect(orphan.stderr).toContain('nowhere');

    const list = await cli(['namespace', 'list', '--json']);
    expect(list.code).toBe(0);
    const page = JSON.parse(list.stdout) as { items: { namespace: string; displayName: string; createdBy: string }[] };
    expect(page.items.map((n) => n.namespace)).toEqual(expect.arrayContaining(['acme', 'acme/platform']));
    expect(page.items.find((n) => n.namespace === 'acme')).toMatchObject({
      displayName: 'ACME Corp',
      createdBy: CLI_SUBJECT,
    });
    const table = await cli(['namespace', 'list']);
    expect(table.code).toBe(0);
    expect(table.lines[0]).toMatch(/^NAMESPACE\s+DISPLAY NAME/);
    expect(table.stdout).toContain('acme/platform');
  }, 90_000);

  it('apikey create prints the key alone on the last line; list never shows it; revoke marks it revoked', async () => {
    const created = await cli(['apikey', 'create', '--name', 'ci-deploy', '--role', 'member', '--namespace', 'acme']);
    expect(created.code).toBe(0);
    const key = created.lines.at(-1)!;
    expect(key).toMatch(KEY_FORMAT);
    expect(created.lines.filter((line) => line.includes(key))).toEqual([key]);
    expect(created.stderr).toContain('shown this once');
    expect(created.stderr).not.toContain(key);
    // ca_<26-character id>_<secret>: the secret is base64url, which may itself hold a '_'.
    const secret = key.slice(30);
    const id = key.slice(3, 29).toUpperCase();

    const list = await cli(['apikey', 'list', '--namespace', 'acme', '--json']);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain(secret);
    const page = JSON.parse(list.stdout) as { items: Record<string, unknown>[] };
    expect(page.items).toEqual([
      expect.objectContaining({ id, name: 'ci-deploy', role: 'member', status: 'active', createdBy: CLI_SUBJECT }),
    ]);
    const table = await cli(['apikey', 'list', '--namespace', 'acme']);
    expect(table.stdout).toContain(id);
    expect(table.stdout).not.toContain(secret);

    expect(
      (await cli(['apikey', 'create', '--name', 'ci-deploy', '--role', 'viewer', '--namespace', 'acme'])).code,
    ).toBe(5);
    const past = await cli([
      'apikey',
      'create',
      '--name',
      'old',
      '--role',
      'viewer',
      '--expires',
      '2001-01-01T00:00:00Z',
    ]);
    expect(past.code).toBe(2);
    expect(past.stderr).toContain('--expires');
    expect((await cli(['apikey', 'create', '--name', 'x', '--role', 'viewer', '--namespace', 'ghost'])).code).toBe(4);

    const revoked = await cli(['apikey', 'revoke', id.toLowerCase(), '--namespace', 'acme']);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`Revoked API key ${id}`);
    expect((await cli(['apikey', 'revoke', id, '--namespace', 'acme'])).code).toBe(5);
    expect((await cli(['apikey', 'revoke', id])).code).toBe(4); // not in the default namespace
    expect((await cli(['apikey', 'revoke', '01ARZ3NDEKTSV4RRFFQ69G5FAV', '--namespace', 'acme'])).code).toBe(4);

    expect(JSON.parse((await cli(['apikey', 'list', '--namespace', 'acme', '--json'])).stdout).items).toEqual([]);
    const all = JSON.parse(
      (await cli(['apikey', 'list', '--namespace', 'acme', '--include-revoked', '--json'])).stdout,
    );
    expect(all.items).toEqual([expect.objectContaining({ id, status: 'revoked', revokedBy: CLI_SUBJECT })]);

    // The audit log names the CLI's operator for both changes.
    const dataSource = await createDataSource(db.config(), { entities: ENTITIES });
    await dataSource.initialize();
    try {
      const rows: { actor: string; action: string }[] = await dataSource.query(
        `SELECT actor, action FROM audit_log WHERE target = $1 ORDER BY id`,
        [id],
      );
      expect(rows).toEqual([
        { actor: CLI_SUBJECT, action: 'apikey.create' },
        { actor: CLI_SUBJECT, action: 'apikey.revoke' },
      ]);
    } finally {
      await dataSource.destroy();
    }
  }, 120_000);

  it('a key it creates authenticates at the server as apikey:<id>, and is refused (401) once revoked', async () => {
    // PostgreSQL: the server runs throughout. Embedded: it admits one process, so the server stops for each CLI call.
    const live = target.kind === 'postgres';
    expect((await cli(['migrate', 'run'])).code).toBe(0); // a no-op after the tests above; lets this one run alone
    const serve = () => startServer(db, { CLEVERAGENTS_AUTH_SCHEMES: 'apiKey' });
    let server: TestServer | undefined = live ? await serve() : undefined;
    try {
      const created = await cli(['apikey', 'create', '--name', 'whoami-test', '--role', 'admin']);
      expect(created.code).toBe(0);
      const key = created.lines.at(-1)!;
      const id = key.slice(3, 29).toUpperCase();
      server ??= await serve();
      const before = await whoami(server, key);
      expect(before.status).toBe(200);
      expect(before.json.result).toMatchObject({ subject: `apikey:${id}`, scheme: 'apiKey' });

      if (!live) {
        await server.close();
        server = undefined;
      }
      expect((await cli(['apikey', 'revoke', id])).code).toBe(0);
      server ??= await serve();
      const after = await whoami(server, key);
      expect(after.status).toBe(401);
    } finally {
      await server?.close();
    }
  }, 120_000);

  it('namespace members set, list and remove, as cli:<user> in the audit log; exit 2, 4 and 5 where due', async () => {
    const members = (args: string[]) => cli(['namespace', 'members', ...args]);
    const set = await members(['set', 'acme', '--subject', 'oidc:alice', '--role', 'owner']);
    expect(set.code).toBe(0);
    expect(set.lines[0]).toBe('oidc:alice is owner of namespace acme:');
    const table = await members(['list', 'acme']);
    expect(table.code).toBe(0);
    expect(table.lines[0]).toMatch(/^SUBJECT\s+ROLE\s+ADDED BY/);
    const alice = table.lines.find((line) => line.startsWith('oidc:alice ')) ?? '';
    expect(alice.split(/\s+/).slice(0, 3)).toEqual(['oidc:alice', 'owner', CLI_SUBJECT]);

    const badRole = await members(['set', 'acme', '--subject', 'oidc:bob', '--role', 'superuser']);
    expect({ code: badRole.code, stdout: badRole.stdout }).toEqual({ code: 2, stdout: '' });
    expect(badRole.stderr).toContain('--role');
    // The only owner member of a top-level namespace stays until another is made owner.
    const last = await members(['remove', 'acme', '--subject', 'oidc:alice']);
    expect(last.code).toBe(5);
    expect(last.stderr).toContain('last owner');
    expect((await members(['set', 'acme', '--subject', 'oidc:bob', '--role', 'owner'])).code).toBe(0);
    const removed = await members(['remove', 'acme', '--subject', 'oidc:alice']);
    expect({ code: removed.code, stdout: removed.stdout }).toEqual({
      code: 0,
      stdout: 'Removed oidc:alice from namespace acme.\n',
    });
    const unknown = await members(['remove', 'acme', '--subject', 'oidc:alice']);
    expect({ code: unknown.code, stdout: unknown.stdout }).toEqual({ code: 4, stdout: '' });
    expect(unknown.stderr).toContain('oidc:alice is not a member of namespace acme');

    const list = await members(['list', 'acme', '--json']);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({
      items: [
        expect.objectContaining({ namespace: 'acme', subject: 'oidc:bob', role: 'owner', createdBy: CLI_SUBJECT }),
      ],
      totalSize: 1,
    });

    const dataSource = await createDataSource(db.config(), { entities: ENTITIES });
    await dataSource.initialize();
    try {
      const rows: { actor: string; action: string; namespace: string }[] = await dataSource.query(
        `SELECT actor, action, namespace FROM audit_log WHERE target = 'oidc:alice' ORDER BY id`,
      );
      expect(rows).toEqual([
        { actor: CLI_SUBJECT, action: 'member.set', namespace: 'acme' },
        { actor: CLI_SUBJECT, action: 'member.remove', namespace: 'acme' },
      ]);
    } finally {
      await dataSource.destroy();
    }
  }, 120_000);

  it('a membership it sets gives that role at the server: a viewer key made admin of acme/platform lists its keys', async () => {
    const live = target.kind === 'postgres';
    const serve = () => startServer(db, { CLEVERAGENTS_AUTH_SCHEMES: 'apiKey' });
    let server: TestServer | undefined = live ? await serve() : undefined;
    try {
      const created = await cli([
        'apikey',
        'create',
        '--name',
        'member-test',
        '--role',
        'viewer',
        '--namespace',
        'acme',
      ]);
      expect(created.code).toBe(0);
      const key = created.lines.at(-1)!;
      const id = key.slice(3, 29).toUpperCase();
      const set = await cli([
        'namespace',
        'members',
        'set',
        'acme/platform',
        '--subject',
        `apikey:${id}`,
        '--role',
        'admin',
      ]);
      expect(set.code).toBe(0);
      server ??= await serve();
      const listKeys = (namespace: string) =>
        rawCall(
          server!.endpoint,
          { jsonrpc: '2.0', id: 1, method: '_cleveragents/auth/apikey/list', params: { namespace } },
          { 'X-API-Key': key },
        );
      const granted = await listKeys('acme/platform');
      expect(granted.status).toBe(200);
      expect(granted.json.result).toMatchObject({ items: [] });
      // In acme the key is still the viewer it was created as: the role came from the membership alone.
      const refused = await listKeys('acme');
      expect(refused.status).toBe(403);
      expect(refused.json.error.code).toBe(-32003);
    } finally {
      await server?.close();
    }
  }, 120_000);

  if (target.kind === 'embedded') {
    it('refuses at once (exit 3) while a server holds the data directory, naming it, the pid and the way out', async () => {
      const port = await freePort();
      const server = spawn(process.execPath, [DIST_MAIN], {
        env: {
          PATH: process.env.PATH ?? '',
          NODE_ENV: 'test',
          ...db.env,
          HOST: '127.0.0.1',
          PORT: String(port),
          CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('the server did not start listening')), 60_000);
          server.on('exit', (code) => reject(new Error(`the server exited with ${code}`)));
          createInterface({ input: server.stdout }).on('line', (line) => {
            if (line.includes('"msg":"listening"')) {
              clearTimeout(timer);
              resolve();
            }
          });
        });
        for (const args of [
          ['apikey', 'list'],
          ['migrate', 'show'],
        ]) {
          const run = await cli(args);
          expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 3, stdout: '' });
          // It answered while the server still held the directory: it did not wait for the lock to be let go.
          expect({ serverExited: server.exitCode !== null || server.signalCode !== null }).toEqual({
            serverExited: false,
          });
          expect(run.stderr).toContain(db.env.CLEVERAGENTS_DATA_DIR);
          expect(run.stderr).toContain(`process ${server.pid}`);
          expect(run.stderr).toContain('CleverAgents server');
          expect(run.stderr).toContain('stop the server');
          expect(run.stderr).toContain('DATABASE_URL');
        }
      } finally {
        if (server.exitCode === null && server.signalCode === null) {
          const exited = new Promise((resolve) => server.once('exit', resolve));
          server.kill('SIGTERM');
          await exited;
        }
      }
      // Once the server is gone, the directory is the CLI's again.
      expect((await cli(['apikey', 'list'])).code).toBe(0);
    }, 120_000);
  }
});
