import { existsSync, lstatSync, statSync } from 'node:fs';
import { chmod, chown, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { EXIT } from '../../packages/cli/src/exit-codes.js';
import { writeCredentials } from '../../packages/cli/src/credentials.js';
import { cliHome, expectExit, runCli, type CliHome, type CliRun } from '../support/cli.js';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { assertCliBuilt } from '../support/terminal.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * `cleveragents` against a server that requires an API key (embedded database, the conformance actor):
 * exit 3 without a key or with a wrong one, the key from the flag or the environment, and a stored login
 * (`login`, used by later commands without flags; `logout`).
 */

describe('cleveragents against a server that requires an API key', () => {
  let db: TestDatabase;
  let server: TestServer;
  let key: string;
  let home: CliHome;

  beforeAll(async () => {
    assertCliBuilt();
    home = await cliHome();
    db = await createEmbeddedTestDatabase();
    ({ server, bootstrapKey: key } = await startServerWithBootstrapKey(db));
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(home)?.cleanup();
  });

  const credentials = () => join(home.env.XDG_CONFIG_HOME, 'cleveragents', 'credentials.json');

  it('exit 3 without a key: the hint names --api-key and CLEVERAGENTS_API_KEY', async () => {
    const run = await runCli(['--server', server.baseUrl, 'sessions', 'list'], { home });
    expectExit(run, EXIT.AUTH);
    expect(run.stderr).toMatch(/^error: .*code -32002\)$/m);
    expect(run.stderr).toContain(
      'hint: this server requires authentication: pass --api-key or set CLEVERAGENTS_API_KEY',
    );
    const json = await runCli(['--server', server.baseUrl, '--json', 'tasks', 'list'], { home });
    expectExit(json, EXIT.AUTH);
    expect(JSON.parse(json.stdout.trim().split('\n').at(-1)!)).toEqual({
      error: expect.objectContaining({ exitCode: 3, hint: expect.stringContaining('--api-key') }),
    });
  });

  it('exit 3 with a wrong key: the hint says the key was not accepted', async () => {
    const run = await runCli(['--server', server.baseUrl, '--api-key', 'ca_wrong', 'sessions', 'list'], { home });
    expectExit(run, EXIT.AUTH);
    expect(run.stderr).toContain('hint: the server did not accept the API key');
    const env = await runCli(['--server', server.baseUrl, 'sessions', 'list'], {
      home,
      env: { CLEVERAGENTS_API_KEY: 'ca_wrong' },
    });
    expectExit(env, EXIT.AUTH);
  });

  it('the card is public; the key from --api-key or CLEVERAGENTS_API_KEY is accepted', async () => {
    const card = await runCli(['--server', server.baseUrl, 'card'], { home });
    expectExit(card, EXIT.OK);
    expect(card.stdout).toContain('apiKey: API key in header "X-API-Key"');
    const flag = await runCli(['--server', server.baseUrl, '--api-key', key, 'sessions', 'list'], { home });
    expectExit(flag, EXIT.OK);
    const env = await runCli(['sessions', 'list'], {
      home,
      env: { CLEVERAGENTS_SERVER: server.baseUrl, CLEVERAGENTS_API_KEY: key },
    });
    expectExit(env, EXIT.OK);
  });

  it('login stores the key (0600) for later commands without flags; logout forgets it', async () => {
    const keyless = await runCli(['--server', server.baseUrl, 'login'], { home });
    // Without a key, login signs in at the server's SSO; this server has none, and says what to pass.
    expectExit(keyless, EXIT.LOGIN_UNSUPPORTED);
    expect(keyless.stderr).toBe(
      `error: ${server.baseUrl} declares no OpenID Connect or OAuth2 sign-in in its Agent Card\n` +
        `hint: sign in with an API key: cleveragents --server ${server.baseUrl} login --api-key KEY\n`,
    );
    expect(existsSync(credentials())).toBe(false);
    const login = await runCli(['--server', `${server.baseUrl}/`, 'login', '--api-key', key], { home });
    expectExit(login, EXIT.OK);
    expect(login.stderr).toContain(`Stored the API key for ${server.baseUrl} in ${credentials()} (default server)`);
    expect(statSync(credentials()).mode & 0o777).toBe(0o600);
    expect(statSync(join(home.env.XDG_CONFIG_HOME, 'cleveragents')).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(credentials(), 'utf8'))).toEqual({
      defaultServer: server.baseUrl,
      contexts: {},
      servers: { [server.baseUrl]: { apiKey: key, savedAt: expect.any(String) } },
    });

    const stored = await runCli(['sessions', 'list'], { home });
    expectExit(stored, EXIT.OK);
    expect(stored.stdout).toBe('No sessions.\n');
    const named = await runCli(['--server', server.baseUrl, 'tasks', 'list'], { home });
    expectExit(named, EXIT.OK);
    // A key given wins over the stored one.
    const wrong = await runCli(['--api-key', 'ca_wrong', 'sessions', 'list'], { home });
    expectExit(wrong, EXIT.AUTH);

    const logout = await runCli(['logout'], { home });
    expectExit(logout, EXIT.OK);
    expect(logout.stderr).toBe(`Forgot the login for ${server.baseUrl}\n`);
    expect(existsSync(credentials())).toBe(true);
    expect(await readFile(credentials(), 'utf8')).not.toContain(key);
    const after = await runCli(['sessions', 'list'], { home });
    expectExit(after, EXIT.USAGE);
    expect(after.stderr).toContain('No server to talk to');
    const anonymous = await runCli(['--server', server.baseUrl, 'sessions', 'list'], { home });
    expectExit(anonymous, EXIT.AUTH);
    const again = await runCli(['logout'], { home });
    expectExit(again, EXIT.OK);
    expect(again.stderr).toBe(`No stored login in ${credentials()}\n`);
  });

  describe('the folder and file the credentials are kept in', () => {
    let own: CliHome;
    const folder = (): string => join(own.env.XDG_CONFIG_HOME, 'cleveragents');
    const login = (): Promise<CliRun> => runCli(['--server', server.baseUrl, 'login', '--api-key', key], { home: own });

    beforeEach(async () => {
      own = await cliHome();
    });

    afterEach(async () => {
      await own.cleanup();
    });

    it('a world-writable folder made before the login is 0700 after it, the file 0600', async () => {
      await mkdir(folder(), { recursive: true });
      await chmod(folder(), 0o777);
      expectExit(await login(), EXIT.OK);
      expect(statSync(folder()).mode & 0o777).toBe(0o700);
      expect(statSync(join(folder(), 'credentials.json')).mode & 0o777).toBe(0o600);
    });

    it('a folder that is a symbolic link is refused: nothing is written where it points', async () => {
      const elsewhere = join(own.dir, 'elsewhere');
      await mkdir(elsewhere, { mode: 0o777 });
      await mkdir(own.env.XDG_CONFIG_HOME, { recursive: true });
      await symlink(elsewhere, folder());
      const run = await login();
      expectExit(run, EXIT.FAILED);
      expect(run.stderr).toContain(`error: Refusing to keep credentials in ${folder()}: it is a symbolic link`);
      expect(await readdir(elsewhere)).toEqual([]);
    });

    it('a folder owned by another user is refused', async () => {
      await mkdir(folder(), { recursive: true, mode: 0o700 });
      // Only root can give a folder away; elsewhere the case cannot be set up.
      if (process.getuid?.() !== 0) return;
      await chown(folder(), 65534, 65534);
      const run = await login();
      expectExit(run, EXIT.FAILED);
      expect(run.stderr).toContain(`error: Refusing to keep credentials in ${folder()}: it belongs to user 65534`);
      expect(await readdir(folder())).toEqual([]);
    });

    it('a credentials.json that is a symbolic link is refused, not written through', async () => {
      await mkdir(folder(), { recursive: true, mode: 0o700 });
      const target = join(own.dir, 'target.json');
      const before = '{"contexts":{},"servers":{}}\n';
      await writeFile(target, before);
      await symlink(target, join(folder(), 'credentials.json'));
      const run = await login();
      expectExit(run, EXIT.FAILED);
      expect(run.stderr).toContain(
        `error: Refusing to read ${join(folder(), 'credentials.json')}: it is a symbolic link`,
      );
      expect(await readFile(target, 'utf8')).toBe(before);
      expect(lstatSync(join(folder(), 'credentials.json')).isSymbolicLink()).toBe(true);
    });

    it('the file is written through a new temporary file: a link planted at a guessable name is not followed', async () => {
      await mkdir(folder(), { recursive: true, mode: 0o700 });
      const target = join(own.dir, 'planted.json');
      await writeFile(target, '');
      // The name the temporary file had before it was random.
      await symlink(target, join(folder(), `credentials.json.${process.pid}.tmp`));
      await writeCredentials(
        { contexts: {}, servers: { 'http://h': { apiKey: 'ca_secret', savedAt: 'now' } } },
        own.env,
      );
      expect(await readFile(target, 'utf8')).toBe('');
      expect(await readFile(join(folder(), 'credentials.json'), 'utf8')).toContain('ca_secret');
    });
  });
});
