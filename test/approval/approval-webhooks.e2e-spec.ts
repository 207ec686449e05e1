import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { secretKeyId } from '../../packages/server/src/common/secret-box.js';
import { ulid } from '../../packages/server/src/common/ulid.js';
import { ApprovalLinks } from '../../packages/server/src/approval/approval-links.js';
import { ApprovalWebhookRepository } from '../../packages/server/src/approval/approval-webhook.repository.js';
import { CAPABILITIES, wireMessage, type Json } from '../support/orchestration.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { startLangGraphServer, type LangGraphServer } from '../support/langgraph-server.js';
import {
  fieldsOf,
  reasonOf,
  startServer,
  startServerWithBootstrapKey,
  type TestServer,
  keyedCalls,
} from '../support/server.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * Approval webhooks (docs/plans.md#approval-webhooks), end to end on a real server and a real LangGraph API server
 * whose `protocol` graph (test/fixtures/langgraph/protocol-graph.mjs) asks approval of a client-side read of
 * /work/notes.txt. Receivers are real HTTP servers on loopback, admitted by CLEVERAGENTS_PUSH_ALLOWED_HOSTS as
 * task push receivers are.
 */

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const CONSOLE = 'https://agents.example.test';
const SECRET_KEY = randomBytes(32);
const MAX_WEBHOOKS = 3;

const REMOTE_ACTOR: Json = {
  kind: 'actor',
  name: 'remote',
  spec: { description: 'the protocol graph', graphId: 'protocol', tools: [] },
};

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  url: string;
}

/** A real webhook receiver on loopback; `status(n)` answers the n-th request (from 0), after `delayMs(n)`. */
class Receiver {
  readonly received: Received[] = [];
  readonly answered: number[] = [];
  private server!: http.Server;

  constructor(
    private readonly status: (n: number) => number = () => 200,
    private readonly delayMs: (n: number) => number = () => 0,
  ) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const n = this.received.length;
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString(), url: req.url ?? '' });
        setTimeout(() => {
          this.answered.push(n);
          res.writeHead(this.status(n)).end();
        }, this.delayMs(n));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  get origin(): string {
    return this.url('');
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The signature the console would recompute for a link, from the server's key alone (HKDF, then HMAC). */
function expectedLinkSignature(namespace: string, approvalId: string, expires: number): string {
  const derived = Buffer.from(
    hkdfSync('sha256', SECRET_KEY, Buffer.alloc(0), 'cleveragents-signing\0approval-link', 32),
  );
  const mac = createHmac('sha256', derived)
    .update(JSON.stringify(['approval-link', namespace, approvalId, expires]))
    .digest('base64url');
  return `${secretKeyId(SECRET_KEY)}.${mac}`;
}

describe.each(databaseTargets())('approval webhooks, on $kind', (target) => {
  let langgraph: LangGraphServer;
  let db: TestDatabase;
  let server: TestServer;
  let ownerKey: string;
  let adminKey: string;
  let memberKey: string;
  let viewerKey: string;
  let admin: string;
  let member: string;
  let namespace: string;
  let receivers: Receiver[] = [];

  const { rpc, call, ok } = keyedCalls(() => server);
  const receiver = async (status?: (n: number) => number, delayMs?: (n: number) => number) => {
    const made = await new Receiver(status, delayMs).start();
    receivers.push(made);
    return made;
  };
  const webhooks = async (): Promise<Json[]> => (await ok(adminKey, 'approval/webhook/list')).items;

  /** A task of the member waiting at the read's gate: its approval's id, and when the gate answered. */
  async function gate(): Promise<{ approvalId: string; taskId: string; contextId: string; at: number }> {
    const { sessionId } = await ok(memberKey, 'session/create', { actor: 'remote', profile: 'autonomous' });
    const answer = await rpc(memberKey, 'SendMessage', {
      message: wireMessage('plan please', { contextId: sessionId, metadata: CAPABILITIES }),
    });
    const task = answer.json.result.task;
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const request = (task.status.message.parts as Json[])
      .map((p) => p.data as Json | undefined)
      .find((d) => d?.type === 'cleveragents/approval-request')!;
    return { approvalId: request.approvalId, taskId: task.id, contextId: sessionId, at: Date.now() };
  }

  beforeAll(async () => {
    langgraph = await startLangGraphServer();
    db = await target.create();
    const started = await startServerWithBootstrapKey(db, serverEnv());
    server = started.server;
    ownerKey = started.bootstrapKey;
    adminKey = (await ok(ownerKey, 'auth/apikey/create', { name: 'approver', role: 'admin' })).key;
    memberKey = (await ok(ownerKey, 'auth/apikey/create', { name: 'member', role: 'member' })).key;
    viewerKey = (await ok(ownerKey, 'auth/apikey/create', { name: 'viewer', role: 'viewer' })).key;
    admin = (await ok(adminKey, 'auth/whoami')).subject;
    const whoami = await ok(memberKey, 'auth/whoami');
    member = whoami.subject;
    namespace = whoami.defaultNamespace;
    await ok(ownerKey, 'registry/create', REMOTE_ACTOR);
  }, 60000);

  const serverEnv = () => ({
    CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
    CLEVERAGENTS_ACTOR_BACKEND: 'langgraph',
    CLEVERAGENTS_LANGGRAPH_URL: langgraph.url,
    CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1',
    CLEVERAGENTS_PUSH_RETRIES: '2',
    CLEVERAGENTS_SECRET_KEY: SECRET_KEY.toString('base64'),
    CLEVERAGENTS_MAX_APPROVAL_WEBHOOKS_PER_NAMESPACE: String(MAX_WEBHOOKS),
    PUBLIC_URL: CONSOLE,
  });

  afterEach(async () => {
    try {
      for (const webhook of await webhooks()) await ok(adminKey, 'approval/webhook/delete', { id: webhook.id });
    } finally {
      await Promise.all(receivers.map((r) => r.stop()));
      receivers = [];
    }
  });

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(langgraph)?.close();
  });

  it('posts a new approval to the webhook: a chat-ready text, a signed body and a signed console link; audited', async () => {
    const hook = await receiver();
    const created = await ok(adminKey, 'approval/webhook/create', { url: hook.url('/services/T1/B2/xoxsecret?x=1') });
    expect(created).toEqual({
      id: expect.stringMatching(ULID),
      namespace,
      origin: hook.origin,
      createdBy: admin,
      createdAt: expect.any(String),
      lastDelivery: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    const { secret, ...view } = created;

    // Listed by origin only: neither the URL's path and query (a chat tool's URL is a credential) nor the secret.
    expect(await webhooks()).toEqual([view]);
    // Sealed at rest: the stored row holds neither in clear.
    const rows: Json[] = await server.app.get(DataSource).query('SELECT * FROM approval_webhooks');
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows);
    for (const clear of [secret, 'xoxsecret', '/services/T1', 'x=1']) expect(stored).not.toContain(clear);
    expect(rows[0].secrets).toMatch(new RegExp(`^v1:${secretKeyId(SECRET_KEY)}:`));

    const { approvalId, taskId, contextId } = await gate();
    await until(() => hook.received.length === 1, 'the approval posted to the webhook');
    const [delivery] = hook.received;
    expect(delivery.url).toBe('/services/T1/B2/xoxsecret?x=1');
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.headers['x-cleveragents-delivery']).toBe(`${created.id}.${approvalId}`);

    // The body's signature, as a receiver checks it with the secret it was shown once.
    const signature = String(delivery.headers['x-cleveragents-signature']);
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature) ?? [];
    expect(v1).toBe(createHmac('sha256', secret).update(`${t}.${delivery.body}`).digest('hex'));
    expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(60);
    expect(createHmac('sha256', 'another secret').update(`${t}.${delivery.body}`).digest('hex')).not.toBe(v1);

    const payload = JSON.parse(delivery.body);
    expect(payload).toEqual({
      type: 'cleveragents/approval-requested',
      title: 'Approval needed: fs_read_text_file',
      asked: 'call fs_read_text_file (fs/read_text_file) with path "/work/notes.txt"',
      text:
        `Approval needed: fs_read_text_file in ${namespace}, asked by ${member}: call fs_read_text_file ` +
        `(fs/read_text_file) with path "/work/notes.txt". Open ${payload.link.url} to answer (sign in first).`,
      approval: {
        approvalId,
        namespace,
        requester: member,
        sessionId: contextId,
        taskId,
        requestId: 'approval-1',
        kind: 'tool',
        subjectHash: expect.stringMatching(/^[0-9a-f]{64}$/),
        options: ['approve', 'reject'],
        askedAt: expect.any(String),
        expiresAt: null,
      },
      link: { url: expect.any(String), expiresAt: expect.any(String) },
    });

    // The deep link: the console's approval page, signed for this approval and no other, until it expires.
    const link = new URL(payload.link.url);
    expect(`${link.origin}${link.pathname}`).toBe(`${CONSOLE}/console/approvals/${approvalId}`);
    expect([...link.searchParams.keys()].sort()).toEqual(['expires', 'namespace', 'signature']);
    const expires = Number(link.searchParams.get('expires'));
    expect(new Date(expires * 1000).toISOString()).toBe(payload.link.expiresAt);
    expect(expires - Date.now() / 1000).toBeGreaterThan(7 * 24 * 3600 - 120);
    expect(link.searchParams.get('namespace')).toBe(namespace);
    expect(link.searchParams.get('signature')).toBe(expectedLinkSignature(namespace, approvalId, expires));
    const links = server.app.get(ApprovalLinks);
    expect(links.verify(payload.link.url)).toEqual({ namespace, approvalId, expiresAt: new Date(expires * 1000) });
    const forged = new URL(payload.link.url);
    forged.pathname = '/console/approvals/01JAAAAAAAAAAAAAAAAAAAAAAA';
    expect(links.verify(forged.toString())).toBeUndefined();
    expect(links.verify(payload.link.url, new Date((expires + 1) * 1000))).toBeUndefined();

    // The link authorises nothing: what it carries is no credential.
    for (const credential of [link.searchParams.get('signature')!, payload.link.url]) {
      const answer = await rpc(credential, '_cleveragents/approval/get', { approvalId });
      expect(answer.status).toBe(401);
    }

    await until(async () => (await webhooks())[0].lastDelivery !== null, 'the delivery recorded');
    expect((await webhooks())[0].lastDelivery).toEqual({
      at: expect.any(String),
      ok: true,
      approvalId,
      attempts: 1,
      status: 200,
      error: null,
    });

    const audit = await ok(ownerKey, 'audit/list', { namespace, target: created.id });
    expect(audit.items).toEqual([
      expect.objectContaining({ action: 'approval.webhook.create', actor: admin, details: { origin: hook.origin } }),
    ]);
    const deleted = await ok(adminKey, 'approval/webhook/delete', { id: created.id });
    expect(deleted).toEqual({ ...view, lastDelivery: expect.objectContaining({ ok: true }) });
    expect((await ok(ownerKey, 'audit/list', { namespace, target: created.id })).items[0]).toMatchObject({
      action: 'approval.webhook.delete',
      actor: admin,
    });
    const again = await call(adminKey, 'approval/webhook/delete', { id: created.id });
    expect([again.json.error?.code, reasonOf(again)]).toEqual([-32001, 'WEBHOOK_NOT_FOUND']);

    // Deleted: the next approval is posted nowhere.
    await gate();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hook.received).toHaveLength(1);
  });

  it('retries a 500 with back-off; a receiver that keeps failing is given up on, shown in webhook/list; the gate never waits', async () => {
    const flaky = await receiver((n) => (n === 0 ? 500 : 204));
    const broken = await receiver(() => 500);
    const slow = await receiver(
      () => 200,
      () => 1500,
    );
    const ids = [];
    for (const hook of [flaky, broken, slow]) {
      ids.push((await ok(adminKey, 'approval/webhook/create', { url: hook.url('/hook') })).id);
    }
    const { approvalId } = await gate();
    // The gate answered while the slow receiver still held its delivery.
    expect(slow.answered).toEqual([]);
    await until(
      () => flaky.received.length === 2 && broken.received.length === 3 && slow.answered.length === 1,
      'every delivery and retry',
    );
    for (const hook of [flaky, broken]) {
      // Every attempt of one delivery is the same request: the same body, delivery id and signature.
      const first = hook.received[0];
      for (const later of hook.received.slice(1)) {
        expect(later.body).toBe(first.body);
        expect(later.headers['x-cleveragents-delivery']).toBe(first.headers['x-cleveragents-delivery']);
      }
    }
    await until(async () => (await webhooks()).every((w) => w.lastDelivery !== null), 'the deliveries recorded');
    const byId = new Map((await webhooks()).map((w) => [w.id, w.lastDelivery]));
    expect(byId.get(ids[0])).toMatchObject({ ok: true, attempts: 2, status: 204, error: null, approvalId });
    expect(byId.get(ids[1])).toMatchObject({ ok: false, attempts: 3, status: 500, error: 'HTTP 500', approvalId });
    expect(byId.get(ids[2])).toMatchObject({ ok: true, attempts: 1, status: 200, approvalId });
    // Counted with the push deliveries: two delivered, one given up on after HTTP 500s, and their retries.
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    const count = (series: string): number =>
      Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0);
    expect(count('cleveragents_push_deliveries_total{outcome="delivered"}')).toBeGreaterThanOrEqual(2);
    expect(count('cleveragents_push_deliveries_total{outcome="http_error"}')).toBeGreaterThanOrEqual(1);
    expect(count('cleveragents_outbound_retries_total{target="push",reason="http_5xx"}')).toBeGreaterThanOrEqual(3);
  });

  it('refuses what the task push guard refuses, and bad input, with -32602 naming the field; nothing is stored', async () => {
    for (const url of [
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://192.168.1.1:8080/hook',
      'http://[::1]:9/hook',
      'ftp://127.0.0.1/hook',
      'not a url',
      `http://127.0.0.1/${'a'.repeat(2100)}`,
    ]) {
      const answer = await call(adminKey, 'approval/webhook/create', { url });
      expect({ url, code: answer.json.error?.code, fields: fieldsOf(answer) }).toEqual({
        url,
        code: -32602,
        fields: ['url'],
      });
    }
    for (const params of [{}, { url: 42 }, { url: 'http://127.0.0.1:9/hook', secret: 'mine' }]) {
      const answer = await call(adminKey, 'approval/webhook/create', params);
      expect(answer.json.error?.code).toBe(-32602);
    }
    const badId = await call(adminKey, 'approval/webhook/delete', { id: 'nope' });
    expect([badId.json.error?.code, fieldsOf(badId)]).toEqual([-32602, ['id']]);
    expect(await webhooks()).toEqual([]);
    expect(await server.app.get(DataSource).query('SELECT id FROM approval_webhooks')).toEqual([]);
  });

  it('checks a stored URL again at delivery: one the guard now refuses is not called, and the refusal is shown', async () => {
    // A row stored while its host was admitted (straight through the repository, past today's guard).
    const repository = server.app.get(ApprovalWebhookRepository);
    const id = ulid();
    await server.app.get(DataSource).transaction((manager) =>
      repository.insert(manager, {
        id,
        namespace,
        origin: 'http://10.0.0.1',
        url: 'http://10.0.0.1/hook?key=stale',
        secret: 'whsec_stale',
        createdBy: admin,
      }),
    );
    const admitted = await receiver();
    await ok(adminKey, 'approval/webhook/create', { url: admitted.url('/hook') });
    const { approvalId } = await gate();
    await until(async () => (await webhooks()).every((w) => w.lastDelivery !== null), 'both deliveries recorded');
    const stale = (await webhooks()).find((w) => w.id === id)!;
    expect(stale.lastDelivery).toMatchObject({ ok: false, attempts: 0, status: null, approvalId });
    expect(stale.lastDelivery.error).toMatch(/^webhook URL not admissible: /);
    expect(stale.lastDelivery.error).not.toContain('key=stale');
    expect(admitted.received).toHaveLength(1);
  });

  it(`caps a namespace at CLEVERAGENTS_MAX_APPROVAL_WEBHOOKS_PER_NAMESPACE (${MAX_WEBHOOKS}): one more is -32602`, async () => {
    const made = [];
    for (let i = 0; i < MAX_WEBHOOKS; i++) {
      made.push((await ok(adminKey, 'approval/webhook/create', { url: `http://127.0.0.1:9/hook-${i}` })).id);
    }
    const over = await call(ownerKey, 'approval/webhook/create', { url: 'http://127.0.0.1:9/one-more' });
    expect([over.json.error?.code, fieldsOf(over)]).toEqual([-32602, ['namespace']]);
    expect(over.json.error.message).toContain('CLEVERAGENTS_MAX_APPROVAL_WEBHOOKS_PER_NAMESPACE');
    expect((await webhooks()).map((w) => w.id)).toEqual(made);
    // One deleted, one may be made again.
    await ok(adminKey, 'approval/webhook/delete', { id: made[0] });
    await ok(ownerKey, 'approval/webhook/create', { url: 'http://127.0.0.1:9/one-more' });
  });

  it('members and viewers may neither register, list nor delete webhooks (-32003 ROLE_REQUIRED)', async () => {
    const { id } = await ok(adminKey, 'approval/webhook/create', { url: 'http://127.0.0.1:9/hook' });
    for (const key of [memberKey, viewerKey]) {
      for (const [method, params] of [
        ['approval/webhook/create', { url: 'http://127.0.0.1:9/theirs' }],
        ['approval/webhook/list', {}],
        ['approval/webhook/delete', { id }],
      ] as const) {
        const answer = await call(key, method, params);
        expect([method, answer.json.error?.code, reasonOf(answer)]).toEqual([method, -32003, 'ROLE_REQUIRED']);
      }
    }
    expect((await webhooks()).map((w) => w.id)).toEqual([id]);
  });

  it('a server closing lets a delivery under way finish, and records it, before its database closes', async () => {
    const slow = await receiver(
      () => 200,
      () => 1000,
    );
    const { id } = await ok(adminKey, 'approval/webhook/create', { url: slow.url('/hook') });
    const { approvalId } = await gate();
    await until(() => slow.received.length === 1, 'the delivery under way');
    expect(slow.answered).toEqual([]);
    await server.close();
    expect(slow.answered).toEqual([0]);
    server = await startServer(db, serverEnv());
    expect((await webhooks()).find((w) => w.id === id)?.lastDelivery).toMatchObject({ ok: true, approvalId });
  });
});
