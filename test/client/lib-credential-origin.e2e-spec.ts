import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { EXIT } from '../../packages/cli/src/exit-codes.js';
import { connect, type CleverAgentsClient } from '../../packages/client/src/node.js';
import { sendRequest } from '../factories/messages.js';
import { ifAssigned } from '../support/assigned.js';
import { cliHome, runCli, shown, type CliHome } from '../support/cli.js';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { assertCliBuilt } from '../support/terminal.js';

/*
 * Credentials go only to the origin the caller named: not to an interface the Agent Card names on
 * another origin, not across a redirect to another scheme, host or port. Real servers throughout: the
 * CleverAgents server (it requires a key), fronts that rewrite its card or redirect, and a recorder
 * that stands for the other origin and keeps every request it is sent.
 */

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

/** A real HTTP(S) server in front of `target`: it records, redirects where told, and may rewrite the card. */
interface Front {
  url: string;
  origin: string;
  seen: Seen[];
  /** Path → [status, Location]: answered with that redirect instead of being passed on. */
  redirects: Map<string, [number, string]>;
  /** When set, every interface of the card passed on names this URL. */
  interfaceUrl?: string;
  close(): Promise<void>;
}

const CARD_PATH = '/.well-known/agent-card.json';

function body(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A front for `target`; without one, a recorder that answers 404 to everything. */
async function startFront(target?: string, tls?: { key: string; cert: string }): Promise<Front> {
  const front: Front = { url: '', origin: '', seen: [], redirects: new Map(), close: () => Promise.resolve() };
  const handler = (req: IncomingMessage, res: import('node:http').ServerResponse): void => {
    const path = req.url ?? '/';
    front.seen.push({ method: req.method ?? '', path, headers: req.headers });
    const redirect = front.redirects.get(path);
    if (redirect) return void res.writeHead(redirect[0], { location: redirect[1] }).end();
    if (!target) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('recorded\n');
    void body(req).then((sent) => {
      const to = new URL(path, target);
      const upstream = httpRequest(to, { method: req.method, headers: { ...req.headers, host: to.host } }, (up) => {
        if (path !== CARD_PATH || !front.interfaceUrl) {
          res.writeHead(up.statusCode ?? 502, up.headers);
          return void up.pipe(res);
        }
        void body(up).then((raw) => {
          const card = JSON.parse(raw.toString()) as { supportedInterfaces?: { url: string }[] };
          for (const i of card.supportedInterfaces ?? []) i.url = front.interfaceUrl!;
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card));
        });
      });
      upstream.on('error', () => res.destroy());
      upstream.end(sent);
    });
  };
  const server = tls ? createHttpsServer(tls, handler) : createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  front.origin = `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  front.url = front.origin;
  front.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return front;
}

/** The credential headers among what a server was sent. */
const credentialHeaders = (seen: Seen[]): string[] =>
  seen.flatMap((s) => [s.headers['x-api-key'], s.headers.authorization].filter((h) => h !== undefined).map(String));

/** Connects, then asks whoami and sends a message: whatever gets that far. The error it ended with. */
async function useIt(options: Parameters<typeof connect>[0]): Promise<unknown> {
  let client: CleverAgentsClient | undefined;
  try {
    client = await connect(options);
    await client.whoami();
    await client.send(sendRequest('tck-complete-task'));
    return undefined;
  } catch (err) {
    return err;
  } finally {
    await client?.close();
  }
}

describe('credentials go only to the origin the caller named', () => {
  let db: TestDatabase;
  let server: TestServer;
  let key: string;
  let front: Front;
  let recorder: Front;

  beforeAll(async () => {
    db = await createEmbeddedTestDatabase();
    ({ server, bootstrapKey: key } = await startServerWithBootstrapKey(db, {
      CLEVERAGENTS_AUTH_SCHEMES: 'apiKey,bearer',
    }));
    front = await startFront(server.baseUrl);
    recorder = await startFront();
  });

  beforeEach(() => {
    front.seen.length = 0;
    front.redirects.clear();
    front.interfaceUrl = undefined;
    recorder.seen.length = 0;
  });

  afterAll(async () => {
    await ifAssigned(front)?.close();
    await ifAssigned(recorder)?.close();
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  const credentials = () => [{ apiKey: key }, { bearerToken: key }];

  it('a card naming its interface on another origin: nothing is sent there, the error names both origins', async () => {
    front.interfaceUrl = `${recorder.url}/a2a`;
    for (const creds of credentials()) {
      const err = await useIt({ server: front.url, ...creds });
      expect(credentialHeaders(recorder.seen)).toEqual([]);
      expect(recorder.seen).toEqual([]);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toContain(front.origin);
      expect((err as Error).message).toContain(recorder.origin);
      expect((err as { hint?: string }).hint).toContain(`--server ${recorder.origin}`);
    }
  });

  it('the card of an agent alone, the same', async () => {
    front.interfaceUrl = `${recorder.url}/a2a`;
    const err = await useIt({ agent: front.url, apiKey: key });
    expect(recorder.seen).toEqual([]);
    expect((err as Error).message).toContain(recorder.origin);
  });

  it.each([
    ['the card', CARD_PATH],
    ['a JSON-RPC call', '/a2a'],
  ])('a redirect of %s to another origin is not followed with the credentials', async (_what, path) => {
    front.interfaceUrl = `${front.url}/a2a`;
    front.redirects.set(path, [307, `${recorder.url}${path}`]);
    for (const creds of credentials()) {
      const err = await useIt({ server: front.url, ...creds });
      expect(credentialHeaders(recorder.seen)).toEqual([]);
      expect(recorder.seen).toEqual([]);
      expect((err as Error).message).toContain(`redirected to ${recorder.origin}`);
      expect((err as Error).message).toContain(front.origin);
    }
  });

  it('a redirect to the same host on another port is another origin too', async () => {
    const port = new URL(recorder.url).port;
    front.redirects.set(CARD_PATH, [302, `http://127.0.0.1:${port}${CARD_PATH}`]);
    const err = await useIt({ server: front.url, apiKey: key });
    expect(recorder.seen).toEqual([]);
    expect((err as Error).message).toContain(`redirected to ${recorder.origin}`);
  });

  it('a redirect within the origin keeps the credentials', async () => {
    front.interfaceUrl = `${front.url}/old/a2a`;
    front.redirects.set('/old/a2a', [308, '/a2a']);
    for (const creds of credentials()) {
      expect(await useIt({ server: front.url, ...creds })).toBeUndefined();
    }
    const followed = front.seen.filter((s) => s.path === '/a2a' && s.method === 'POST');
    expect(followed.length).toBeGreaterThanOrEqual(4);
    expect(followed.every((s) => s.headers['x-api-key'] === key || s.headers.authorization === `Bearer ${key}`)).toBe(
      true,
    );
  });

  it('without credentials the card is followed as before: there is nothing to leak', async () => {
    front.interfaceUrl = `${recorder.url}/a2a`;
    const err = await useIt({ server: front.url });
    expect(recorder.seen.map((s) => s.method)).toContain('POST');
    expect(credentialHeaders(recorder.seen)).toEqual([]);
    expect(err).toBeInstanceOf(Error);
  });

  describe('from https (the CLI, trusting this test certificate)', () => {
    let home: CliHome;
    let secure: Front;
    let cert: string;

    beforeAll(async () => {
      assertCliBuilt();
      home = await cliHome();
      const keyFile = join(home.dir, 'key.pem');
      cert = join(home.dir, 'cert.pem');
      // prettier-ignore
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', cert,
        '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
      secure = await startFront(server.baseUrl, {
        key: await readFile(keyFile, 'utf8'),
        cert: await readFile(cert, 'utf8'),
      });
    });

    afterAll(async () => {
      await ifAssigned(secure)?.close();
      await ifAssigned(home)?.cleanup();
    });

    it('works over https with the key; a redirect down to plain http is not followed with it', async () => {
      const whoami = () =>
        runCli(['--server', secure.url, '--api-key', key, 'whoami'], {
          home,
          env: { NODE_EXTRA_CA_CERTS: cert },
        });
      secure.interfaceUrl = `${secure.url}/a2a`;
      const ok = await whoami();
      expect({ code: ok.code, run: shown(ok) }).toEqual({ code: EXIT.OK, run: shown(ok) });
      secure.redirects.set(CARD_PATH, [301, `${recorder.url}${CARD_PATH}`]);
      const run = await whoami();
      expect(credentialHeaders(recorder.seen)).toEqual([]);
      expect(recorder.seen).toEqual([]);
      expect(run.code).not.toBe(EXIT.OK);
      expect(run.stderr).toContain(`${secure.origin} redirected to ${recorder.origin}`);
    });
  });
});
