import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { OidcTokens } from '../../packages/cli/src/credentials.js';
import { CliError, EXIT } from '../../packages/cli/src/exit-codes.js';
import { freshTokens, revoke, signIn } from '../../packages/cli/src/sso.js';
import { ifAssigned } from '../support/assigned.js';
import { cliHome, type CliHome } from '../support/cli.js';
import { startLoginProvider, type LoginProvider } from '../support/oidc-login-provider.js';
import { until } from '../support/wait.js';

/*
 * Where the stored sign-in's tokens go: the endpoints of the issuer's discovery document, read fresh
 * for a refresh or a revocation. The document must name the issuer it was asked for (OpenID Connect
 * Discovery §4.3); its endpoints may be on other origins (the specs allow it, large IdPs do it), over
 * HTTPS, or plain HTTP on this machine for an issuer on it. The issuer here is a real OpenID provider
 * behind a front that edits its discovery document; a recorder on 127.0.0.2 (loopback, yet not one of
 * the names the client takes for this machine) stands for a host elsewhere.
 */

interface Listening {
  url: string;
  seen: { method: string; path: string; body: string }[];
  close(): Promise<void>;
}

async function listen(server: Server, host: string, seen: Listening['seen']): Promise<Listening> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => resolve(text));
  });
}

/** Answers every request 400 invalid_grant, and keeps it. */
async function startRecorder(): Promise<Listening> {
  const seen: Listening['seen'] = [];
  const server = createServer((req, res) => {
    void read(req).then((body) => {
      seen.push({ method: req.method ?? '', path: req.url ?? '', body });
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');
    });
  });
  return listen(server, '127.0.0.2', seen);
}

type Edit = (doc: Record<string, unknown>, self: string) => void;

/**
 * Serves `idp`'s discovery document, edited by `edits.discovery` (given the front's own URL); passes
 * any other request on to `idp`, its JSON answer edited by `edits.answer`.
 */
async function startIssuerFront(idp: LoginProvider): Promise<Listening & { edits: { discovery: Edit; answer: Edit } }> {
  const seen: Listening['seen'] = [];
  const edits: { discovery: Edit; answer: Edit } = { discovery: () => undefined, answer: () => undefined };
  let self = '';
  const server = createServer((req, res) => {
    void read(req).then(async (body) => {
      seen.push({ method: req.method ?? '', path: req.url ?? '', body });
      const discovery = req.url === '/.well-known/openid-configuration';
      const answer = await fetch(`${idp.issuer}${req.url ?? '/'}`, {
        method: req.method,
        headers: { 'content-type': req.headers['content-type'] ?? 'text/plain' },
        body: req.method === 'GET' ? undefined : body,
      });
      const doc = (await answer.json()) as Record<string, unknown>;
      (discovery ? edits.discovery : edits.answer)(doc, self);
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    });
  });
  const listening = await listen(server, '127.0.0.1', seen);
  self = listening.url;
  return { ...listening, edits };
}

describe("the stored sign-in's tokens go where the issuer's discovery document says, under its rules", () => {
  let idp: LoginProvider;
  let home: CliHome;
  let front: Awaited<ReturnType<typeof startIssuerFront>>;
  let recorder: Listening;
  const server = 'http://127.0.0.1:9';

  beforeAll(async () => {
    idp = await startLoginProvider({ deviceFlow: true });
    home = await cliHome();
    front = await startIssuerFront(idp);
    recorder = await startRecorder();
  });

  beforeEach(() => {
    recorder.seen.length = 0;
  });

  afterAll(async () => {
    await ifAssigned(front)?.close();
    await ifAssigned(recorder)?.close();
    await ifAssigned(idp)?.close();
    await ifAssigned(home)?.cleanup();
  });

  const expired = (): OidcTokens => ({
    issuer: front.url,
    clientId: idp.clientId,
    accessToken: 'an-access-token',
    refreshToken: 'a-refresh-token',
    expiresAt: new Date(Date.now() - 1000).toISOString(),
  });
  const refresh = (): Promise<unknown> => freshTokens({ server }, expired(), home.env).catch((e: unknown) => e);

  it('endpoints on another origin than the issuer are used: the refresh reaches the token endpoint named', async () => {
    front.edits.discovery = (doc, self) => {
      doc.issuer = self;
    };
    const err = await refresh();
    // The provider's own token endpoint (another port, so another origin) refused the made-up token.
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(EXIT.LOGIN_AGAIN);
    expect((err as Error).message).toContain('(invalid_grant)');
  });

  it('a token or revocation endpoint over plain HTTP off this machine: no token is sent', async () => {
    front.edits.discovery = (doc, self) => {
      doc.issuer = self;
      doc.token_endpoint = `${recorder.url}/token`;
      doc.revocation_endpoint = `${recorder.url}/revoke`;
    };
    const err = await refresh();
    expect(recorder.seen).toEqual([]);
    expect((err as Error).message).toContain(`token_endpoint at ${recorder.url}/token`);
    const revoked = await revoke(expired()).catch((e: unknown) => e);
    expect(recorder.seen).toEqual([]);
    expect((revoked as Error).message).toContain(`${recorder.url}/token`);
  });

  it('a document naming another issuer than the one asked is refused: nothing goes to its endpoints', async () => {
    front.edits.discovery = (doc) => {
      doc.token_endpoint = `${recorder.url}/token`;
    };
    const err = await refresh();
    expect(recorder.seen).toEqual([]);
    expect((err as Error).message).toContain(`Cannot read the OpenID configuration of ${front.url}`);
    expect((err as Error).message).toContain('issuer does not match the expected issuer');
  });

  it('what the issuer says to show (the device address and code) reaches the screen with its controls escaped', async () => {
    front.edits.discovery = (doc, self) => {
      doc.issuer = self;
      doc.device_authorization_endpoint = `${self}/device/auth`;
    };
    // OSC 52 would set the clipboard; the cursor moves would rewrite the line above.
    front.edits.answer = (doc) => {
      doc.verification_uri = `${String(doc.verification_uri)}\u001b]52;c;Y3VybCBldmlsfHNo\u0007`;
      doc.user_code = `${String(doc.user_code)}\u001b[1A\u001b[2K`;
    };
    const shown: string[] = [];
    const done = signIn(
      { issuer: front.url, clientId: idp.clientId, scopes: ['openid'] },
      { flow: 'device', openBrowser: false, out: { write: (t: string) => shown.push(t) }, env: home.env },
    ).catch((e: unknown) => e);
    await until(() => shown.length > 0, 'the device address and code to be shown', 30_000);
    idp.expireDeviceCodes();
    expect(await done).toBeInstanceOf(CliError);
    expect(shown.join('')).not.toContain('\u001b');
    expect(shown.join('')).toContain('\\e]52;c;Y3VybCBldmlsfHNo\\x07');
    front.edits.answer = () => undefined;
  });
});
