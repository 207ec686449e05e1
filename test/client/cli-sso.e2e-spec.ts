import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EXIT } from '../../packages/cli/src/exit-codes.js';
import type { CredentialsFile } from '../../packages/cli/src/credentials.js';
import { connectOptionsOf } from '../../packages/cli/src/context.js';
import { connect } from '../../packages/client/src/node.js';
import { cliHome, expectExit, runCli, startCli as startCliProcess, type CliHome, type CliRun } from '../support/cli.js';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { ACCOUNT_GROUP, Browser, startLoginProvider, type LoginProvider } from '../support/oidc-login-provider.js';
import { startServer, type TestServer } from '../support/server.js';
import { assertCliBuilt } from '../support/terminal.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * `cleveragents login` against a real OpenID provider (oidc-provider) and the real server, the CLI run
 * as a process and the test acting as the person's browser: the device grant (approved, denied,
 * expired), Authorization Code with PKCE through the loopback redirect where the issuer has no device
 * endpoint, the tokens used and refreshed by every command, logout revoking them, and contexts.
 */

const LOGIN_TIMEOUT = 120000;

describe('cleveragents login: single sign-on', () => {
  let home: CliHome;
  let deviceIdp: LoginProvider;
  let browserIdp: LoginProvider;
  let dbs: TestDatabase[] = [];
  let deviceServer: TestServer;
  let browserServer: TestServer;
  /** Trusts the device issuer, but takes tokens for another audience than the issuer gives the CLI. */
  let otherAudienceServer: TestServer;

  const serverEnv = (idp: LoginProvider): Record<string, string> => ({
    CLEVERAGENTS_AUTH_SCHEMES: 'oidc',
    OIDC_ISSUER_URL: idp.issuer,
    OIDC_AUDIENCE: idp.audience,
    OIDC_ROLE_MAP: JSON.stringify({ [ACCOUNT_GROUP]: 'default:member' }),
    OIDC_CLI_CLIENT_ID: idp.clientId,
  });

  beforeAll(async () => {
    assertCliBuilt();
    home = await cliHome();
    deviceIdp = await startLoginProvider({ deviceFlow: true });
    browserIdp = await startLoginProvider({ deviceFlow: false });
    dbs = [await createEmbeddedTestDatabase(), await createEmbeddedTestDatabase(), await createEmbeddedTestDatabase()];
    deviceServer = await startServer(dbs[0], serverEnv(deviceIdp));
    browserServer = await startServer(dbs[1], serverEnv(browserIdp));
    otherAudienceServer = await startServer(dbs[2], {
      ...serverEnv(deviceIdp),
      OIDC_AUDIENCE: 'urn:cleveragents:another-api',
    });
  }, 120000);

  afterAll(async () => {
    for (const cli of running) cli.kill();
    await ifAssigned(deviceServer)?.close();
    await ifAssigned(browserServer)?.close();
    await ifAssigned(otherAudienceServer)?.close();
    for (const db of dbs) await db.cleanup();
    await ifAssigned(deviceIdp)?.close();
    await ifAssigned(browserIdp)?.close();
    await ifAssigned(home)?.cleanup();
  });

  // Every CLI started in the background, ended after the suite (a failed test may leave one waiting).
  const running: ReturnType<typeof startCliProcess>[] = [];
  const startCli = (...args: Parameters<typeof startCliProcess>): ReturnType<typeof startCliProcess> => {
    const cli = startCliProcess(...args);
    running.push(cli);
    return cli;
  };

  const credentialsFile = (): string => join(home.env.XDG_CONFIG_HOME, 'cleveragents', 'credentials.json');
  const stored = async (): Promise<CredentialsFile> =>
    JSON.parse(await readFile(credentialsFile(), 'utf8')) as CredentialsFile;

  /** Runs `login` with the device grant, and approves (or denies) the code as `login` in the browser. */
  async function deviceLogin(
    args: string[],
    person: string,
    decision: 'approve' | 'deny' | 'expire' = 'approve',
  ): Promise<CliRun> {
    const cli = startCli(['login', ...args], { home });
    const [, complete] = await cli.stderrMatching(/\(or open (\S+)\)/);
    expect(complete).toContain(`${deviceIdp.issuer}/device?user_code=`);
    if (decision === 'expire') {
      deviceIdp.expireDeviceCodes();
    } else {
      const page = await new Browser().approveDevice(complete, person, decision);
      expect(page.status).toBe(200);
    }
    return cli.done;
  }

  it(
    'device login: the code is printed, the tokens stored (0600), whoami shows the subject, commands send the token',
    async () => {
      const run = await deviceLogin(['--server', deviceServer.baseUrl], 'ada');
      expectExit(run, EXIT.OK);
      expect(run.stderr).toMatch(new RegExp(`open ${deviceIdp.issuer}/device in a browser and enter the code \\S+`));
      expect(run.stderr).toContain(`Signed in to ${deviceServer.baseUrl} as oidc:ada;`);

      expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);
      expect(statSync(join(home.env.XDG_CONFIG_HOME, 'cleveragents')).mode & 0o777).toBe(0o700);
      const file = await stored();
      expect(file.defaultServer).toBe(deviceServer.baseUrl);
      const tokens = file.servers[deviceServer.baseUrl]!.oidc!;
      expect(tokens).toEqual(
        expect.objectContaining({
          issuer: deviceIdp.issuer,
          clientId: deviceIdp.clientId,
          accessToken: expect.any(String),
          refreshToken: expect.any(String),
          expiresAt: expect.any(String),
        }),
      );

      const whoami = await runCli(['whoami'], { home });
      expectExit(whoami, EXIT.OK);
      expect(whoami.stdout).toMatch(/^subject: +oidc:ada$/m);
      expect(whoami.stdout).toMatch(/^namespace: +default$/m);
      expect(whoami.stdout).toMatch(/^role: +member$/m);
      const json = await runCli(['whoami', '--json'], { home });
      expectExit(json, EXIT.OK);
      expect(JSON.parse(json.stdout)).toEqual(
        expect.objectContaining({
          subject: 'oidc:ada',
          scheme: 'oidc',
          defaultNamespace: 'default',
          defaultNamespaceRole: 'member',
        }),
      );

      const tasks = await runCli(['tasks', 'list'], { home });
      expectExit(tasks, EXIT.OK);
      const sessions = await runCli(['sessions', 'list'], { home });
      expectExit(sessions, EXIT.OK);
      // Without the stored sign-in the same server refuses.
      const anonymous = await runCli(['--server', deviceServer.baseUrl, 'sessions', 'list'], {
        home: { ...home, env: { ...home.env, XDG_CONFIG_HOME: join(home.dir, 'elsewhere') } },
      });
      expectExit(anonymous, EXIT.AUTH);
    },
    LOGIN_TIMEOUT,
  );

  it(
    'a sign-in the server refuses (tokens for another audience): not "Signed in", the reason, exit 3, nothing stored',
    async () => {
      const run = await deviceLogin(['--server', otherAudienceServer.baseUrl, '--no-default'], 'ada');
      expectExit(run, EXIT.AUTH);
      expect(run.stderr).not.toContain('Signed in');
      expect(run.stderr).toMatch(
        new RegExp(
          `^error: ${otherAudienceServer.baseUrl} refused the sign-in at ${deviceIdp.issuer}: .+ \\(TOKEN_INVALID_AUDIENCE\\); nothing was stored$`,
          'm',
        ),
      );
      expect(run.stderr).toContain(
        "hint: the issuer makes the CLI's tokens for another audience than the server accepts",
      );
      const file = await stored();
      expect(file.servers[otherAudienceServer.baseUrl]).toBeUndefined();
      expect(JSON.stringify(file)).not.toContain(otherAudienceServer.baseUrl);
    },
    LOGIN_TIMEOUT,
  );

  it(
    'a token with less than a minute left is refreshed at connect time and stored again',
    async () => {
      deviceIdp.accessTokenTtlSeconds = 30;
      try {
        const run = await deviceLogin(['--server', deviceServer.baseUrl], 'grace');
        expectExit(run, EXIT.OK);
      } finally {
        deviceIdp.accessTokenTtlSeconds = 300;
      }
      const before = (await stored()).servers[deviceServer.baseUrl]!.oidc!;
      expect(Date.parse(before.expiresAt!) - Date.now()).toBeLessThan(60_000);

      const whoami = await runCli(['whoami', '--json'], { home });
      expectExit(whoami, EXIT.OK);
      expect(JSON.parse(whoami.stdout)).toEqual(expect.objectContaining({ subject: 'oidc:grace' }));
      const after = (await stored()).servers[deviceServer.baseUrl]!.oidc!;
      expect(after.accessToken).not.toBe(before.accessToken);
      expect(Date.parse(after.expiresAt!) - Date.now()).toBeGreaterThan(60_000);
      expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);

      // A token with time left is used as it is.
      const again = await runCli(['whoami', '--json'], { home });
      expectExit(again, EXIT.OK);
      expect((await stored()).servers[deviceServer.baseUrl]!.oidc!.accessToken).toBe(after.accessToken);
    },
    LOGIN_TIMEOUT,
  );

  it(
    'commands started together refresh once: the rotated refresh token is not used twice',
    async () => {
      deviceIdp.accessTokenTtlSeconds = 30;
      try {
        expectExit(await deviceLogin(['--server', deviceServer.baseUrl], 'grace'), EXIT.OK);
      } finally {
        deviceIdp.accessTokenTtlSeconds = 300;
      }
      const runs = await Promise.all([1, 2, 3].map(() => runCli(['whoami', '--json'], { home })));
      for (const run of runs) {
        expectExit(run, EXIT.OK);
        expect(JSON.parse(run.stdout)).toEqual(expect.objectContaining({ subject: 'oidc:grace' }));
      }
      // The sign-in survived: its refresh token still works at the issuer.
      const tokens = (await stored()).servers[deviceServer.baseUrl]!.oidc!;
      expect((await deviceIdp.refresh(tokens.refreshToken!)).status).toBe(200);
    },
    LOGIN_TIMEOUT,
  );

  it(
    'a connection made from the stored sign-in refreshes before each request, so a long session outlives its token',
    async () => {
      deviceIdp.accessTokenTtlSeconds = 30;
      try {
        expectExit(await deviceLogin(['--server', deviceServer.baseUrl], 'grace'), EXIT.OK);
        // Each token lives 30 s, under the 60 s margin: every request asks for a new one.
        const options = await connectOptionsOf({ server: deviceServer.baseUrl }, { ...home.env });
        expect(typeof options.bearerToken).toBe('function');
        const client = await connect(options);
        try {
          const seen: string[] = [];
          for (let i = 0; i < 2; i += 1) {
            expect(await client.whoami()).toEqual(expect.objectContaining({ subject: 'oidc:grace' }));
            seen.push((await stored()).servers[deviceServer.baseUrl]!.oidc!.accessToken);
          }
          expect(seen[1]).not.toBe(seen[0]);
        } finally {
          await client.close();
        }
      } finally {
        deviceIdp.accessTokenTtlSeconds = 300;
      }
    },
    LOGIN_TIMEOUT,
  );

  it(
    'a refresh the issuer refuses (revoked) says to log in again, with its own exit code',
    async () => {
      deviceIdp.accessTokenTtlSeconds = 30;
      try {
        expectExit(await deviceLogin(['--server', deviceServer.baseUrl], 'hedy'), EXIT.OK);
      } finally {
        deviceIdp.accessTokenTtlSeconds = 300;
      }
      await deviceIdp.revoke((await stored()).servers[deviceServer.baseUrl]!.oidc!.refreshToken!);
      const run = await runCli(['sessions', 'list'], { home });
      expectExit(run, EXIT.LOGIN_AGAIN);
      expect(run.stderr).toContain(`error: The stored sign-in for ${deviceServer.baseUrl} could not be refreshed`);
      expect(run.stderr).toContain(`hint: run \`cleveragents login --server ${deviceServer.baseUrl}\` again`);
    },
    LOGIN_TIMEOUT,
  );

  it(
    'logout revokes the refresh token at the issuer and deletes the stored tokens',
    async () => {
      expectExit(await deviceLogin(['--server', deviceServer.baseUrl], 'ada'), EXIT.OK);
      const tokens = (await stored()).servers[deviceServer.baseUrl]!.oidc!;
      // The refresh token works before logout (and is rotated: use the new one for the check after).
      const live = await deviceIdp.refresh(tokens.refreshToken!);
      expect(live.status).toBe(200);
      const current = (live.body.refresh_token as string | undefined) ?? tokens.refreshToken!;
      const file = await stored();
      file.servers[deviceServer.baseUrl]!.oidc!.refreshToken = current;
      const { writeCredentials } = await import('../../packages/cli/src/credentials.js');
      await writeCredentials(file, home.env);

      const logout = await runCli(['logout'], { home });
      expectExit(logout, EXIT.OK);
      expect(logout.stderr).toContain(`Revoked the tokens at ${deviceIdp.issuer}`);
      expect(logout.stderr).toContain(`Forgot the login for ${deviceServer.baseUrl}`);
      expect((await stored()).servers[deviceServer.baseUrl]).toBeUndefined();
      const dead = await deviceIdp.refresh(current);
      expect(dead).toEqual({ status: 400, body: expect.objectContaining({ error: 'invalid_grant' }) });

      // Signed out of a server that signs people in: the hint is to sign in again, there.
      const after = await runCli(['--server', deviceServer.baseUrl, 'whoami'], { home });
      expectExit(after, EXIT.AUTH);
      expect(after.stderr).toContain(
        `hint: this server signs you in with single sign-on: run \`cleveragents --server ${deviceServer.baseUrl} login\` (or pass --api-key)`,
      );
      expect(after.stderr).not.toContain('CLEVERAGENTS_API_KEY');
    },
    LOGIN_TIMEOUT,
  );

  it(
    'a denied device code: a clear message and exit 8; an expired one: exit 9; nothing stored',
    async () => {
      const denied = await deviceLogin(['--server', deviceServer.baseUrl, '--no-default'], 'ada', 'deny');
      expectExit(denied, EXIT.LOGIN_DENIED);
      expect(denied.stderr).toContain(`error: The sign-in was denied at ${deviceIdp.issuer}`);
      const expired = await deviceLogin(['--server', deviceServer.baseUrl, '--no-default'], 'ada', 'expire');
      expectExit(expired, EXIT.LOGIN_EXPIRED);
      expect(expired.stderr).toContain('error: The sign-in code expired before the sign-in was completed');
      expect(expired.stderr).toContain(`hint: run \`cleveragents --server ${deviceServer.baseUrl} login\` again`);
      expect((await stored()).servers[deviceServer.baseUrl]).toBeUndefined();
    },
    LOGIN_TIMEOUT,
  );

  it(
    'without a device endpoint: Authorization Code with PKCE through the loopback redirect',
    async () => {
      const cli = startCli(['login', '--server', browserServer.baseUrl, '--context', 'browser'], { home });
      const [, address] = await cli.stderrMatching(/open this address in a browser:\n\s+(\S+)/);
      const authorize = new URL(address);
      expect(authorize.origin).toBe(browserIdp.issuer);
      expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authorize.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
      expect(authorize.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);

      const browser = new Browser();
      const loginPage = await browser.visit(authorize.href);
      // The consent redirects to the CLI's loopback listener, which answers the browser.
      const last = await browser.signIn(loginPage, 'grace');
      expect(last.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?code=/);
      expect(last.text).toContain('Signed in to CleverAgents');

      const run = await cli.done;
      expectExit(run, EXIT.OK);
      expect(run.stderr).toContain(`Signed in to ${browserServer.baseUrl} as oidc:grace in context "browser"`);
      const whoami = await runCli(['whoami', '--json'], { home });
      expectExit(whoami, EXIT.OK);
      expect(JSON.parse(whoami.stdout)).toEqual(expect.objectContaining({ subject: 'oidc:grace', scheme: 'oidc' }));
    },
    LOGIN_TIMEOUT,
  );

  it(
    'an issuer without the flow asked for: a clear message and exit 10, nothing stored',
    async () => {
      const before = (await stored()).servers[browserServer.baseUrl];
      const run = await runCli(['login', '--server', browserServer.baseUrl, '--flow', 'device', '--no-default'], {
        home,
      });
      expectExit(run, EXIT.LOGIN_UNSUPPORTED);
      expect(run.stderr).toContain(
        `error: The issuer ${browserIdp.issuer} does not offer the device grant (no device_authorization_endpoint)`,
      );
      expect(run.stderr).toContain('hint: try another --flow, or use --api-key');
      expect((await stored()).servers[browserServer.baseUrl]).toEqual(before);
    },
    LOGIN_TIMEOUT,
  );

  it(
    '--context picks between two stored servers; contexts use changes the default',
    async () => {
      expectExit(await deviceLogin(['--server', deviceServer.baseUrl, '--context', 'device'], 'ada'), EXIT.OK);
      if (!(await stored()).contexts.browser) {
        throw new Error('the PKCE test stores the "browser" context first');
      }
      const list = await runCli(['contexts', 'list', '--json'], { home });
      expectExit(list, EXIT.OK);
      expect(JSON.parse(list.stdout)).toEqual({
        currentContext: 'device',
        contexts: expect.arrayContaining([
          { name: 'device', server: deviceServer.baseUrl, login: 'sso', current: true },
          { name: 'browser', server: browserServer.baseUrl, login: 'sso', current: false },
        ]),
      });

      const who = async (args: string[]): Promise<string> => {
        const run = await runCli([...args, 'whoami', '--json'], { home });
        expectExit(run, EXIT.OK);
        return (JSON.parse(run.stdout) as { subject: string }).subject;
      };
      expect(await who([])).toBe('oidc:ada');
      expect(await who(['--context', 'browser'])).toBe('oidc:grace');
      expect(await who(['--context', 'device'])).toBe('oidc:ada');

      expectExit(await runCli(['contexts', 'use', 'browser'], { home }), EXIT.OK);
      expect(await who([])).toBe('oidc:grace');

      const unknown = await runCli(['--context', 'nope', 'whoami'], { home });
      expectExit(unknown, EXIT.USAGE);
      expect(unknown.stderr).toContain('error: No context "nope"');
      expect(unknown.stderr).toContain('known contexts: ');
    },
    LOGIN_TIMEOUT,
  );

  it(
    'two logins to one server in two contexts stay apart: each refreshed and signed out on its own',
    async () => {
      const who = async (args: string[], where: CliHome = home): Promise<string> => {
        const run = await runCli([...args, 'whoami', '--json'], { home: where });
        expectExit(run, EXIT.OK);
        return (JSON.parse(run.stdout) as { subject: string }).subject;
      };
      const server = deviceServer.baseUrl;
      expectExit(await deviceLogin(['--server', server, '--context', 'ada-here', '--no-default'], 'ada'), EXIT.OK);
      deviceIdp.accessTokenTtlSeconds = 30;
      try {
        expectExit(
          await deviceLogin(['--server', server, '--context', 'grace-here', '--no-default'], 'grace'),
          EXIT.OK,
        );
      } finally {
        deviceIdp.accessTokenTtlSeconds = 300;
      }
      expect(await who(['--context', 'ada-here'])).toBe('oidc:ada');
      const before = (await stored()).contexts['grace-here']!.login!.oidc!;
      // Grace's token has under a minute left: refreshed, and stored back in her context, not Ada's.
      expect(await who(['--context', 'grace-here'])).toBe('oidc:grace');
      const after = await stored();
      expect(after.contexts['grace-here']!.login!.oidc!.accessToken).not.toBe(before.accessToken);
      expect(await who(['--context', 'ada-here'])).toBe('oidc:ada');
      expect(after.servers[server]).toBeUndefined();

      const list = await runCli(['contexts', 'list', '--json'], { home });
      expectExit(list, EXIT.OK);
      expect(JSON.parse(list.stdout).contexts).toEqual(
        expect.arrayContaining([
          { name: 'ada-here', server, login: 'sso', current: false },
          { name: 'grace-here', server, login: 'sso', current: false },
        ]),
      );

      const logout = await runCli(['--context', 'grace-here', 'logout'], { home });
      expectExit(logout, EXIT.OK);
      expect(logout.stderr).toContain(`Forgot the login for ${server} (context "grace-here")`);
      expect(await who(['--context', 'ada-here'])).toBe('oidc:ada');
      const gone = await runCli(['--context', 'grace-here', 'whoami'], { home });
      expectExit(gone, EXIT.AUTH);
    },
    LOGIN_TIMEOUT,
  );

  it(
    'a credentials file written before contexts kept their own logins still works as it did',
    async () => {
      const tokens = (await stored()).contexts['ada-here']!.login!.oidc!;
      const legacy = await cliHome();
      try {
        // The shape every earlier version wrote: logins by server, contexts naming only a server.
        const { writeCredentials } = await import('../../packages/cli/src/credentials.js');
        await writeCredentials(
          {
            defaultServer: deviceServer.baseUrl,
            currentContext: 'old',
            contexts: { old: { server: deviceServer.baseUrl } },
            servers: { [deviceServer.baseUrl]: { oidc: tokens, savedAt: new Date().toISOString() } },
          },
          legacy.env,
        );
        for (const args of [[], ['--context', 'old'], ['--server', deviceServer.baseUrl]]) {
          const run = await runCli([...args, 'whoami', '--json'], { home: legacy });
          expectExit(run, EXIT.OK);
          expect(JSON.parse(run.stdout)).toEqual(expect.objectContaining({ subject: 'oidc:ada' }));
        }
        const list = await runCli(['contexts', 'list', '--json'], { home: legacy });
        expect(JSON.parse(list.stdout)).toEqual({
          currentContext: 'old',
          contexts: [{ name: 'old', server: deviceServer.baseUrl, login: 'sso', current: true }],
        });
      } finally {
        await legacy.cleanup();
      }
    },
    LOGIN_TIMEOUT,
  );
});
