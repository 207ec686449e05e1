import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createStdioApp } from '../../packages/server/src/app.factory.js';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { startLoginProvider, type LoginProvider } from '../support/oidc-login-provider.js';
import { startServer, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The web console's files at /console/ on the real server: the security headers on every answer, the
 * index for the app's own routes, nothing outside the console's directory whatever the path says, the
 * switch, a console not built, a PUBLIC_URL with a path, the console in the Agent Card, and the built
 * console served by default.
 */

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

const SCRIPT = 'console.log("console");\n'.repeat(40);

const INDEX =
  '<!doctype html><html><head><base href="/console/" /><link rel="stylesheet" href="assets/app-T3ST.css" />' +
  '<script type="module" src="assets/app-T3ST.js"></script></head><body><div id="root"></div></body></html>';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  bytes: Buffer;
}

/** A request sent as written: node:http leaves `..`, `%2e` and backslashes in the path, as fetch would not. */
function raw(baseUrl: string, path: string, method = 'GET', headers: Record<string, string> = {}): Promise<Answer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          bytes: Buffer.concat(chunks),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

function expectSecurityHeaders(answer: Answer, csp = CSP): void {
  expect(answer.headers).toMatchObject({ 'content-security-policy': csp, ...SECURITY_HEADERS });
}

describe('the web console at /console/', () => {
  let db: TestDatabase;
  let work: string;
  let dist: string;

  beforeAll(async () => {
    db = await createEmbeddedTestDatabase();
    work = await mkdtemp(join(tmpdir(), 'console-route-'));
    dist = join(work, 'dist');
    await mkdir(join(dist, 'assets'), { recursive: true });
    await writeFile(join(dist, 'index.html'), INDEX);
    await writeFile(join(dist, 'assets', 'app-T3ST.js'), SCRIPT);
    await writeFile(join(dist, 'assets', 'app-T3ST.css'), 'body { margin: 0 }\n');
    await writeFile(join(dist, 'assets', 'app-T3ST.js.br'), brotliCompressSync(SCRIPT));
    await writeFile(join(dist, 'assets', 'app-T3ST.js.gz'), gzipSync(SCRIPT));
    await writeFile(join(dist, 'assets', 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    await writeFile(join(dist, 'assets', 'font.woff2'), Buffer.from([0x77, 0x4f, 0x46, 0x32]));
    await writeFile(join(dist, 'favicon.ico'), Buffer.from([0, 0, 1, 0]));
    await writeFile(join(dist, 'meta.json'), '{"script":{}}');
    await writeFile(join(dist, '.env'), 'SECRET=in-a-dotfile');
    await writeFile(join(work, 'outside.txt'), 'SECRET=outside');
    await symlink(join(work, 'outside.txt'), join(dist, 'assets', 'leak.js'));
    await symlink(work, join(dist, 'up'));
  }, 120000);

  afterAll(async () => {
    await ifAssigned(db)?.cleanup();
    if (ifAssigned(work)) await rm(work, { recursive: true, force: true });
  });

  describe('served from CLEVERAGENTS_CONSOLE_DIR', () => {
    let server: TestServer;

    beforeAll(async () => {
      server = await startServer(db, { CLEVERAGENTS_CONSOLE_DIR: dist });
    }, 60000);

    afterAll(async () => {
      await ifAssigned(server)?.close();
    });

    it('/console redirects to /console/ (the query kept), which is the index page, with every security header', async () => {
      const redirect = await raw(server.baseUrl, '/console?next=%2Fchat');
      expect(redirect.status).toBe(308);
      expect(redirect.headers.location).toBe('/console/?next=%2Fchat');
      expectSecurityHeaders(redirect);

      const page = await raw(server.baseUrl, '/console/');
      expect(page.status).toBe(200);
      expect(page.body).toBe(INDEX);
      expect(page.headers).toMatchObject({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' });
      expectSecurityHeaders(page);
      // fetch follows the redirect as a browser does.
      const followed = await fetch(`${server.baseUrl}/console`);
      expect([followed.status, followed.url, await followed.text()]).toEqual([
        200,
        `${server.baseUrl}/console/`,
        INDEX,
      ]);
    });

    it('serves each asset with its type, cached for a year; an unhashed file is revalidated', async () => {
      const cases: [string, string][] = [
        ['/console/assets/app-T3ST.js', 'text/javascript; charset=utf-8'],
        ['/console/assets/app-T3ST.css', 'text/css; charset=utf-8'],
        ['/console/assets/logo.svg', 'image/svg+xml'],
        ['/console/assets/font.woff2', 'font/woff2'],
      ];
      for (const [path, type] of cases) {
        const answer = await raw(server.baseUrl, path);
        expect([path, answer.status, answer.headers['content-type']]).toEqual([path, 200, type]);
        expect(answer.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expectSecurityHeaders(answer);
      }
      const js = await raw(server.baseUrl, '/console/assets/app-T3ST.js');
      expect(js.body).toBe(SCRIPT);
      for (const [path, type] of [
        ['/console/favicon.ico', 'image/x-icon'],
        ['/console/meta.json', 'application/json; charset=utf-8'],
      ]) {
        const answer = await raw(server.baseUrl, path);
        expect([answer.status, answer.headers['content-type'], answer.headers['cache-control']]).toEqual([
          200,
          type,
          'no-cache',
        ]);
      }
    });

    it("sends the build's Brotli or gzip copy to a browser that takes it, and the file itself otherwise", async () => {
      const path = '/console/assets/app-T3ST.js';
      const cases: [string | undefined, string | undefined, (bytes: Buffer) => Buffer][] = [
        ['gzip, deflate, br, zstd', 'br', brotliDecompressSync],
        ['gzip', 'gzip', gunzipSync],
        ['br;q=0, gzip;q=0.5', 'gzip', gunzipSync],
        ['*', 'br', brotliDecompressSync],
        [undefined, undefined, (bytes) => bytes],
        ['identity', undefined, (bytes) => bytes],
      ];
      const etags = new Set<string>();
      for (const [accept, encoding, decode] of cases) {
        const answer = await raw(
          server.baseUrl,
          path,
          'GET',
          accept === undefined ? {} : { 'accept-encoding': accept },
        );
        expect([accept, answer.status, answer.headers['content-encoding']]).toEqual([accept, 200, encoding]);
        expect(answer.headers.vary).toBe('Accept-Encoding');
        expect(answer.headers['content-type']).toBe('text/javascript; charset=utf-8');
        expect(Number(answer.headers['content-length'])).toBe(answer.bytes.length);
        expect(decode(answer.bytes).toString('utf8')).toBe(SCRIPT);
        etags.add(String(answer.headers.etag));
      }
      // One validator per encoding, so that a cache never answers one encoding's copy for another.
      expect(etags.size).toBe(3);
      // A file without compressed copies is sent as it is.
      const css = await raw(server.baseUrl, '/console/assets/app-T3ST.css', 'GET', { 'accept-encoding': 'br, gzip' });
      expect([css.headers['content-encoding'], css.body]).toEqual([undefined, 'body { margin: 0 }\n']);
    });

    it('answers 304 to a copy that is current', async () => {
      const first = await raw(server.baseUrl, '/console/assets/app-T3ST.css');
      const again = await raw(server.baseUrl, '/console/assets/app-T3ST.css', 'GET', {
        'if-none-match': String(first.headers.etag),
      });
      expect([again.status, again.body]).toEqual([304, '']);
      const page = await raw(server.baseUrl, '/console/');
      const pageAgain = await raw(server.baseUrl, '/console/', 'GET', { 'if-none-match': String(page.headers.etag) });
      expect(pageAgain.status).toBe(304);
      expectSecurityHeaders(pageAgain);
    });

    it("answers the index page for the app's own routes (deep links), and 404 for a missing asset", async () => {
      for (const path of [
        '/console/chat',
        '/console/approvals/01JABCDEF?token=x&expires=1',
        '/console/approvals/01JABCDEF/',
        '/console/assets',
        '/console/index.html',
      ]) {
        const answer = await raw(server.baseUrl, path);
        expect([path, answer.status, answer.body]).toEqual([path, 200, INDEX]);
        expect(answer.headers['cache-control']).toBe('no-cache');
      }
      for (const path of ['/console/assets/app-OLD.js', '/console/missing.png', '/console/chat/x.css']) {
        const answer = await raw(server.baseUrl, path);
        expect([path, answer.status]).toEqual([path, 404]);
        expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
        expectSecurityHeaders(answer);
      }
    });

    it('never answers a file outside the directory, a dotfile or a link leading out: 404', async () => {
      const attempts = [
        '/console/../outside.txt',
        '/console/assets/../../outside.txt',
        '/console/%2e%2e/outside.txt',
        '/console/%2E%2E%2Foutside.txt',
        '/console/assets/%2e%2e/%2e%2e/outside.txt',
        '/console/..%5coutside.txt',
        '/console/assets\\..\\..\\outside.txt',
        '/console/assets%5capp-T3ST.js',
        '/console/app-T3ST.js%00.png',
        '/console/.env',
        '/console/%2eenv',
        '/console/assets/leak.js',
        '/console/up/outside.txt',
        '/console//etc/passwd',
      ];
      for (const path of attempts) {
        const answer = await raw(server.baseUrl, path);
        expect([path, answer.status]).toEqual([path, 404]);
        expect(answer.body).not.toContain('SECRET');
        expectSecurityHeaders(answer);
      }
      // A path that is not percent-encoding at all is refused by the router itself, before any file is named.
      const malformed = await raw(server.baseUrl, '/console/%E0%A4%A/outside.txt');
      expect(malformed.status).toBe(400);
      expect(malformed.body).not.toContain('SECRET');
    });

    it('answers HEAD as GET without a body; other methods 405 with Allow', async () => {
      const head = await raw(server.baseUrl, '/console/assets/app-T3ST.js', 'HEAD');
      expect([head.status, head.body, head.headers['content-length']]).toEqual([200, '', String(SCRIPT.length)]);
      expect(head.headers['content-type']).toBe('text/javascript; charset=utf-8');
      const headPage = await raw(server.baseUrl, '/console/chat', 'HEAD');
      expect([headPage.status, headPage.body, headPage.headers['content-length']]).toEqual([
        200,
        '',
        String(Buffer.byteLength(INDEX)),
      ]);
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
        for (const path of ['/console', '/console/', '/console/assets/app-T3ST.js']) {
          const answer = await raw(server.baseUrl, path, method);
          expect([method, path, answer.status, answer.headers.allow]).toEqual([method, path, 405, 'GET, HEAD']);
          expectSecurityHeaders(answer);
        }
      }
    });

    it("names the console in the Agent Card's extension params, without a sign-in when no client is set", async () => {
      const card = await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json();
      expect(card.capabilities.extensions[0].params.console).toEqual({ path: `${server.baseUrl}/console/` });
    });
  });

  it('CLEVERAGENTS_CONSOLE=off: no route at all, and no console in the card', async () => {
    const server = await startServer(db, { CLEVERAGENTS_CONSOLE: 'off', CLEVERAGENTS_CONSOLE_DIR: dist });
    try {
      const unknown = await raw(server.baseUrl, '/no-such-path');
      for (const path of ['/console', '/console/', '/console/assets/app-T3ST.js', '/console/chat']) {
        const answer = await raw(server.baseUrl, path);
        expect([path, answer.status]).toEqual([path, 404]);
        expect(answer.headers['content-security-policy']).toBeUndefined();
        expect(answer.body).toBe(unknown.body.replace('/no-such-path', path));
      }
      const card = await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json();
      expect(card.capabilities.extensions[0].params.console).toBeUndefined();
    } finally {
      await server.close();
    }
  }, 60000);

  it('a directory without index.html: the server starts, warns once naming it, and /console/ says it is not built', async () => {
    const empty = join(work, 'not-built');
    await mkdir(empty, { recursive: true });
    const lines: Record<string, unknown>[] = [];
    const logSink = {
      write: (line: string): boolean => {
        for (const l of line.split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
        return true;
      },
    };
    const server = await startServer(db, { CLEVERAGENTS_CONSOLE_DIR: empty }, { logSink });
    try {
      const warnings = lines.filter((l) => String(l.msg).includes('console is not built'));
      expect(warnings).toHaveLength(1);
      expect(String(warnings[0].msg)).toContain(empty);
      for (const path of ['/console/', '/console/chat']) {
        const answer = await raw(server.baseUrl, path);
        expect([path, answer.status, answer.body]).toEqual([
          path,
          404,
          'The web console is not built on this server.\n',
        ]);
        expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
        expectSecurityHeaders(answer);
      }
      expect((await raw(server.baseUrl, '/healthz')).status).toBe(200);
    } finally {
      await server.close();
    }
  }, 60000);

  it('stdio has no HTTP: no warning about the console there', async () => {
    const lines: string[] = [];
    const logSink = { write: (line: string): boolean => lines.push(line) > 0 };
    const config = db.config({ CLEVERAGENTS_CONSOLE_DIR: join(work, 'nowhere'), CLEVERAGENTS_AUTH_SCHEMES: 'none' });
    const app = await createStdioApp(config, { logSink });
    try {
      expect(lines.join('')).not.toContain('console is not built');
      // The application's log reached the sink: a warning would have been seen.
      expect(lines.length).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
  }, 60000);

  it('PUBLIC_URL with a path: the page is based there, and /console redirects there', async () => {
    const server = await startServer(db, {
      CLEVERAGENTS_CONSOLE_DIR: dist,
      PUBLIC_URL: 'https://agents.example.test/team-a/agents/',
    });
    try {
      const page = await raw(server.baseUrl, '/console/approvals/01JABCDEF');
      expect(page.status).toBe(200);
      expect(page.body).toBe(INDEX.replace('<base href="/console/" />', '<base href="/team-a/agents/console/" />'));
      expect((await raw(server.baseUrl, '/console')).headers.location).toBe('/team-a/agents/console/');
      const card = await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json();
      expect(card.capabilities.extensions[0].params.console).toEqual({
        path: 'https://agents.example.test/team-a/agents/console/',
      });
      // The file itself is untouched: the next server with another path rewrites it afresh.
      expect(await readFile(join(dist, 'index.html'), 'utf8')).toBe(INDEX);
    } finally {
      await server.close();
    }
  }, 60000);

  describe('with single sign-on', () => {
    let idp: LoginProvider;

    beforeAll(async () => {
      idp = await startLoginProvider({ deviceFlow: false });
    });

    afterAll(async () => {
      await ifAssigned(idp)?.close();
    });

    const oidcEnv = (): Record<string, string> => ({
      CLEVERAGENTS_CONSOLE_DIR: dist,
      CLEVERAGENTS_AUTH_SCHEMES: 'oidc,apiKey',
      OIDC_ISSUER_URL: idp.issuer,
      OIDC_AUDIENCE: idp.audience,
    });

    it("lets the console reach the issuer's origin, and publishes its client id and scopes in the card", async () => {
      const server = await startServer(db, {
        ...oidcEnv(),
        OIDC_CONSOLE_CLIENT_ID: 'cleveragents-console',
        OIDC_CONSOLE_SCOPES: 'openid profile',
      });
      try {
        const page = await raw(server.baseUrl, '/console/');
        const issuerOrigin = new URL(idp.issuer).origin;
        expectSecurityHeaders(page, CSP.replace("connect-src 'self'", `connect-src 'self' ${issuerOrigin}`));
        const card = await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json();
        expect(card.capabilities.extensions[0].params.console).toEqual({
          path: `${server.baseUrl}/console/`,
          login: { clientId: 'cleveragents-console', scopes: ['openid', 'profile'] },
        });
      } finally {
        await server.close();
      }
    }, 60000);

    it('without OIDC_CONSOLE_CLIENT_ID the card names no console client (the CLI’s is its own)', async () => {
      const server = await startServer(db, { ...oidcEnv(), OIDC_CLI_CLIENT_ID: idp.clientId });
      try {
        const params = (await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json()).capabilities
          .extensions[0].params;
        expect(params.console).toEqual({ path: `${server.baseUrl}/console/` });
        expect(params.login.clientId).toBe(idp.clientId);
      } finally {
        await server.close();
      }
    }, 60000);
  });

  it('serves the built console (packages/console/dist, from npm run build) by default', async () => {
    const built = join(process.cwd(), 'packages', 'console', 'dist');
    const assets = await readdir(join(built, 'assets'));
    const script = assets.find((name) => /^app-[A-Z0-9]+\.js$/.test(name));
    expect(script).toBeDefined();
    const server = await startServer(db);
    try {
      const page = await raw(server.baseUrl, '/console/approvals/01JABCDEF');
      expect(page.status).toBe(200);
      expect(page.body).toBe(await readFile(join(built, 'index.html'), 'utf8'));
      expect(page.body).toContain(`src="assets/${script}"`);
      const js = await raw(server.baseUrl, `/console/assets/${script}`);
      expect([js.status, js.headers['content-type'], js.body.length]).toEqual([
        200,
        'text/javascript; charset=utf-8',
        (await readFile(join(built, 'assets', script!), 'utf8')).length,
      ]);
    } finally {
      await server.close();
    }
  }, 60000);
});
