import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { databaseTargets, type DatabaseTarget, type TestDatabase } from '../support/database.js';
import { parseJsonOrUndefined, startServer, type TestServer } from '../support/server.js';
import { wireMessageV03, wireMessageV1 } from '../factories/messages.js';
import { ifAssigned } from '../support/assigned.js';
import { holdWallTime } from '../support/manual-clock.js';
import { DataSource } from 'typeorm';

/*
 * The isolation matrix (docs/protocol.md §4, §6, §7, §8): over real HTTP with real API keys, for every standard A2A
 * operation and every `_cleveragents/*` method the server registers, who may and who may not.
 *
 * Cast, made through the RPC methods: the bootstrap key (owner of `default`) creates `acme` and `globex` and
 * so becomes their owner member; it mints an owner key in each; the acme owner creates `acme/web` and mints
 * the admin, member and viewer keys of `acme` and an admin key of `acme/web`. The whole file runs once with
 * `X-API-Key` (scheme apiKey) and once with `Authorization: Bearer <key>` (scheme bearer).
 *
 * Tasks and push configs are scoped by (namespace, owner), the owner being the key's subject (docs/protocol.md §4):
 * a viewer key can never create a task, so a viewer's allowed task reads show that it passes the role
 * check and then finds nothing of anyone else's. The extension-method table must cover exactly the
 * methods the Agent Card declares, so that a method added later cannot go unchecked.
 */

type Role = 'owner' | 'admin' | 'member' | 'viewer';
type Required = Role | 'authenticated';

/** Strongest first (docs/protocol.md §6.1): the oracle of this file, independent of the server's own table. */
const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];

function mayCall(held: Role, required: Required): boolean {
  return required === 'authenticated' || ROLES.indexOf(held) <= ROLES.indexOf(required);
}

const KEY_PATTERN = /ca_[0-9a-z]{26}_[A-Za-z0-9_-]{43}/g;
/** Loopback, admitted by CLEVERAGENTS_PUSH_ALLOWED_HOSTS; nothing listens there and no config ever fires. */
const WEBHOOK = 'http://127.0.0.1:9/isolation-hook';
const NOWHERE = 'nowhere';
/** A valid `tool` spec for the registry rows. */
const TOOL_SPEC = { description: 'A tool', inputSchema: { type: 'object' }, runsOn: 'server' };

/** One way of presenting an API key: the scheme the server is configured with, and its header. */
interface SchemePass {
  scheme: 'apiKey' | 'bearer';
  credential(key: string): Record<string, string>;
  /** The other scheme's header, which this configuration must not accept. */
  foreign(key: string): Record<string, string>;
  /** What WWW-Authenticate names on a 401. */
  challenge: RegExp;
}

const PASSES: SchemePass[] = [
  {
    scheme: 'apiKey',
    credential: (key) => ({ 'x-api-key': key }),
    foreign: (key) => ({ authorization: `Bearer ${key}` }),
    challenge: /^ApiKey realm="cleveragents", header="X-API-Key"$/,
  },
  {
    scheme: 'bearer',
    credential: (key) => ({ authorization: `Bearer ${key}` }),
    foreign: (key) => ({ 'x-api-key': key }),
    challenge: /^Bearer realm="cleveragents"/,
  },
];

interface Caller {
  label: string;
  key: string;
  id: string;
  subject: string;
  namespace: string;
  role: Role;
}

function callerOf(label: string, key: string, namespace: string, role: Role): Caller {
  const id = key.split('_')[1].toUpperCase();
  return { label, key, id, subject: `apikey:${id}`, namespace, role };
}

/** The secret part of a key: what follows `ca_<id>_` (it may itself hold underscores). */
function secretOf(key: string): string {
  return key.slice('ca_'.length + 26 + 1);
}

/** True when `namespace` is `root` or below it. */
function within(namespace: string, root: string): boolean {
  return namespace === root || namespace.startsWith(`${root}/`);
}

/** One HTTP answer: a single JSON-RPC response, or the first event of an SSE stream. */
interface Answer {
  status: number;
  headers: Headers;
  json: any;
  streamed: boolean;
}

async function post(endpoint: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
  const controller = new AbortController();
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: parseJsonOrUndefined(text), streamed: false };
  }
  try {
    return { status: res.status, headers: res.headers, json: await firstSseEvent(res), streamed: true };
  } finally {
    controller.abort();
  }
}

/** The first `data:` payload of an SSE response (keep-alive comments skipped); the rest is not read. */
async function firstSseEvent(res: Response): Promise<any> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const blocks = buffered.split('\n\n');
      for (const block of blocks.slice(0, -1)) {
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice(6))
          .join('\n');
        if (data) return JSON.parse(data);
      }
      const { value, done } = await reader.read();
      if (done) return undefined;
      buffered += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

function reasonOf(answer: Answer): string | undefined {
  return answer.json?.error?.data?.[0]?.reason;
}

/** 200 and a result (for a stream: its first event carries one). */
function expectAllowed(answer: Answer): any {
  expect({ status: answer.status, error: answer.json?.error }).toEqual({ status: 200, error: undefined });
  expect(answer.json).toHaveProperty('result');
  return answer.json.result;
}

function expectRoleRequired(answer: Answer, required: Role, held: Role, namespace: string): void {
  expect({ status: answer.status, code: answer.json?.error?.code, streamed: answer.streamed }).toEqual({
    status: 403,
    code: -32003,
    streamed: false,
  });
  expect(answer.json.error.data[0]).toMatchObject({
    reason: 'ROLE_REQUIRED',
    domain: 'cleveragents',
    metadata: { requiredRole: required, heldRole: held, namespace },
  });
}

/** -32001 NAMESPACE_NOT_FOUND on HTTP 200, naming `namespace` (or, for a slug below it, that slug). */
function expectNamespaceNotFound(answer: Answer, namespace: string): void {
  expect({ status: answer.status, code: answer.json?.error?.code }).toEqual({ status: 200, code: -32001 });
  expect(answer.json.error.data[0]).toMatchObject({
    reason: 'NAMESPACE_NOT_FOUND',
    metadata: { namespace: expect.stringMatching(new RegExp(`^${namespace}(/|$)`)) },
  });
}

/**
 * A2A's own TaskNotFound: -32001 on HTTP 200, ErrorInfo of domain a2a-protocol.org; a JSON body, or for
 * a v0.3 streaming method the one event of its stream (docs/protocol.md §2.4).
 */
function expectTaskNotFound(answer: Answer, row?: { version: string; stream?: boolean }): void {
  expect({ status: answer.status, code: answer.json?.error?.code, streamed: answer.streamed }).toEqual({
    status: 200,
    code: -32001,
    streamed: row?.version === '0.3' && row.stream === true,
  });
}

/**
 * What a client can tell of an answer: HTTP status and the whole error (code, message, data), with the
 * tokens that legitimately differ between the two requests (the task id, the namespace asked for)
 * replaced, and the JSON-RPC id left out.
 */
function visible(answer: Answer, ...tokens: string[]): string {
  let text = JSON.stringify({ status: answer.status, error: answer.json?.error, result: answer.json?.result });
  for (const token of tokens.filter((t) => t !== '')) text = text.split(token).join('<token>');
  return text;
}

interface TaskRef {
  id: string;
  contextId: string;
}

/** What a standard call addresses. */
interface Target {
  /** v1.0 `tenant`; absent: the key's own namespace. */
  tenant?: string;
  taskId: string;
  configId: string;
}

/** The server, the keys, and the fixtures of one (database, scheme) pass. */
class World {
  server!: TestServer;
  private db!: TestDatabase;
  bootstrap!: Caller;
  acme = {} as Record<Role, Caller>;
  web!: Caller;
  globex!: Caller;
  doomed!: Caller;
  shortLived!: Caller;
  shortLivedUntil = 0;
  private seq = 0;
  /** Tasks made through the fixtures, by owner subject. */
  private readonly owned = new Map<string, Set<string>>();
  private readonly shared = new Map<string, Promise<TaskRef>>();
  private readonly sharedConfigs = new Map<string, Promise<string>>();

  constructor(
    readonly target: DatabaseTarget,
    readonly pass: SchemePass,
  ) {}

  next(prefix: string): string {
    return `${prefix}-${++this.seq}`;
  }

  call(caller: Caller | undefined, method: string, params?: unknown, headers: Record<string, string> = {}) {
    const body = { jsonrpc: '2.0', id: ++this.seq, method, ...(params === undefined ? {} : { params }) };
    return post(this.server.endpoint, body, { ...(caller ? this.pass.credential(caller.key) : {}), ...headers });
  }

  async ok(caller: Caller, method: string, params?: unknown): Promise<any> {
    return expectAllowed(await this.call(caller, method, params));
  }

  async open(): Promise<void> {
    this.db = await this.target.create();
    const printed: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    try {
      this.server = await startServer(this.db, {
        CLEVERAGENTS_AUTH_SCHEMES: this.pass.scheme,
        CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1',
        CLEVERAGENTS_PUSH_RETRIES: '0',
      });
    } finally {
      spy.mockRestore();
    }
    const printedKeys = printed.join('').match(KEY_PATTERN) ?? [];
    expect(printedKeys).toHaveLength(1);
    this.bootstrap = callerOf('bootstrap', printedKeys[0]!, 'default', 'owner');

    // Top-level namespaces are created by an administrator of the default namespace: the bootstrap key.
    for (const namespace of ['acme', 'globex']) {
      expect(await this.ok(this.bootstrap, '_cleveragents/namespace/create', { namespace })).toMatchObject({
        namespace,
        createdBy: this.bootstrap.subject,
      });
    }
    // The creator of a namespace becomes its owner member, and an API key joins its memberships: the
    // bootstrap key mints the first owner key of each.
    const acmeOwner = await this.mintKey(this.bootstrap, 'acme', 'acme-owner', 'owner');
    const globexOwner = await this.mintKey(this.bootstrap, 'globex', 'globex-owner', 'owner');
    this.acme.owner = callerOf('acme owner', acmeOwner.key, 'acme', 'owner');
    this.globex = callerOf('globex owner', globexOwner.key, 'globex', 'owner');

    // Everything else as the acme owner.
    for (const role of ['admin', 'member', 'viewer'] as const) {
      const made = await this.mintKey(this.acme.owner, 'acme', `acme-${role}`, role);
      this.acme[role] = callerOf(`acme ${role}`, made.key, 'acme', role);
    }
    await this.ok(this.acme.owner, '_cleveragents/namespace/create', { namespace: 'acme/web' });
    this.web = callerOf(
      'acme/web admin',
      (await this.mintKey(this.acme.owner, 'acme/web', 'web-admin', 'admin')).key,
      'acme/web',
      'admin',
    );
    this.doomed = callerOf(
      'doomed member',
      (await this.mintKey(this.acme.owner, 'acme', 'doomed', 'member')).key,
      'acme',
      'member',
    );
    // Expires when the test that needs it moves the wall time there, and not while the matrix runs.
    this.shortLivedUntil = Date.now() + 3_600_000;
    const shortLived = await this.mintKey(
      this.acme.owner,
      'acme',
      'short-lived',
      'viewer',
      new Date(this.shortLivedUntil),
    );
    this.shortLived = callerOf('short-lived viewer', shortLived.key, 'acme', 'viewer');
    for (const caller of [this.doomed, this.shortLived, this.web, this.globex, ...Object.values(this.acme)]) {
      expect((await this.ok(caller, '_cleveragents/auth/whoami')).subject).toBe(caller.subject);
    }
    // Every task-owning acme role has a task before the matrix starts, so that lists can show whose is whose.
    for (const role of ['owner', 'admin', 'member'] as const) await this.sharedTask(this.acme[role], 'completed');
  }

  async close(): Promise<void> {
    await ifAssigned(this.server)?.close();
    await ifAssigned(this.db)?.cleanup();
  }

  /** A key minted by `by` through `_cleveragents/auth/apikey/create`. */
  async mintKey(
    by: Caller,
    namespace: string,
    name: string,
    role: Role,
    expiresAt?: Date,
  ): Promise<{ key: string; id: string }> {
    const made = await this.ok(by, '_cleveragents/auth/apikey/create', {
      namespace,
      name,
      role,
      ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}),
    });
    expect(made).toMatchObject({ namespace, name, role, key: expect.stringMatching(KEY_PATTERN) });
    return made;
  }

  /** A new task of `caller` in `tenant` (v1.0 SendMessage): completed, or waiting for input. */
  async newTask(caller: Caller, state: 'completed' | 'waiting', tenant = caller.namespace): Promise<TaskRef> {
    const prefix = state === 'completed' ? 'tck-complete-task' : 'tck-input-required';
    const result = await this.ok(caller, 'SendMessage', { tenant, message: wireMessageV1(prefix) });
    expect(result.task.status.state).toBe(state === 'completed' ? 'TASK_STATE_COMPLETED' : 'TASK_STATE_INPUT_REQUIRED');
    this.recordTask(caller, result.task.id);
    return { id: result.task.id, contextId: result.task.contextId };
  }

  recordTask(caller: Caller, taskId: string): void {
    const set = this.owned.get(caller.subject) ?? new Set<string>();
    set.add(taskId);
    this.owned.set(caller.subject, set);
  }

  /** Task ids the fixtures made for anyone but `caller`. */
  foreignTasks(caller: Caller): string[] {
    return [...this.owned].filter(([subject]) => subject !== caller.subject).flatMap(([, ids]) => [...ids]);
  }

  /** One task per caller and state, made once and reused by every cell that does not consume it. */
  sharedTask(caller: Caller, state: 'completed' | 'waiting'): Promise<TaskRef> {
    const key = `${caller.subject}:${state}`;
    let task = this.shared.get(key);
    if (!task) {
      task = this.newTask(caller, state);
      this.shared.set(key, task);
    }
    return task;
  }

  /** A push config of `caller` on its shared completed task (v1.0 CreateTaskPushNotificationConfig). */
  async newConfig(caller: Caller): Promise<{ taskId: string; configId: string }> {
    const task = await this.sharedTask(caller, 'completed');
    const created = await this.ok(caller, 'CreateTaskPushNotificationConfig', {
      tenant: caller.namespace,
      taskId: task.id,
      url: WEBHOOK,
    });
    expect(created.id).toEqual(expect.any(String));
    return { taskId: task.id, configId: created.id };
  }

  async sharedConfig(caller: Caller): Promise<{ taskId: string; configId: string }> {
    let config = this.sharedConfigs.get(caller.subject);
    if (!config) {
      config = this.newConfig(caller).then((made) => made.configId);
      this.sharedConfigs.set(caller.subject, config);
    }
    return { taskId: (await this.sharedTask(caller, 'completed')).id, configId: await config };
  }

  /** What a row needs, made for `caller` (fresh where the call consumes it). */
  async targetFor(need: Need, caller: Caller, tenant: string | undefined): Promise<Target> {
    switch (need) {
      case 'none':
        return { tenant, taskId: '', configId: '' };
      case 'completed':
        return { tenant, taskId: (await this.sharedTask(caller, 'completed')).id, configId: '' };
      case 'subscribable':
        return { tenant, taskId: (await this.sharedTask(caller, 'waiting')).id, configId: '' };
      case 'waiting':
        return { tenant, taskId: (await this.newTask(caller, 'waiting')).id, configId: '' };
      case 'config':
        return { tenant, ...(await this.sharedConfig(caller)) };
      case 'fresh-config':
        return { tenant, ...(await this.newConfig(caller)) };
      default: {
        const unreachable: never = need;
        throw new Error(`unknown need ${String(unreachable)}`);
      }
    }
  }

  /** Someone else's real target: the acme member's, never consumed (a refused call must not need a fresh one). */
  othersTarget(need: Need, tenant: string | undefined): Promise<Target> {
    const shared: Record<Need, Need> = {
      none: 'none',
      completed: 'completed',
      subscribable: 'subscribable',
      waiting: 'subscribable',
      config: 'config',
      'fresh-config': 'config',
    };
    return this.targetFor(shared[need], this.acme.member, tenant);
  }
}

/* ------------------------------------------------------------------------------------------------------ */
/* The standard A2A operations                                                                             */
/* ------------------------------------------------------------------------------------------------------ */

/** What an allowed call acts on: nothing, a shared task, a fresh task it consumes, a push config. */
type Need = 'none' | 'completed' | 'subscribable' | 'waiting' | 'config' | 'fresh-config';

interface StandardRow {
  label: string;
  method: string;
  version: '1.0' | '0.3';
  role: Required;
  /** `task`: a call about an existing task; `namespace`: it creates or lists in the namespace; `card`. */
  about: 'task' | 'namespace' | 'card';
  need: Need;
  stream?: boolean;
  params(t: Target): Record<string, unknown>;
  check(result: any, t: Target, w: World, caller: Caller): void | Promise<void>;
}

const tenantParam = (t: Target): Record<string, string> => (t.tenant ? { tenant: t.tenant } : {});

/** The interfaces of an extended card that name a tenant. */
function cardTenants(card: any): string[] {
  return (card.supportedInterfaces as { tenant?: string }[]).map((i) => i.tenant ?? '').filter((t) => t !== '');
}

function expectCardFor(card: any, caller: Caller): void {
  const tenants = cardTenants(card);
  expect(tenants).toContain(caller.namespace);
  expect(tenants.filter((tenant) => !within(tenant, caller.namespace))).toEqual([]);
}

const STANDARD_ROWS: StandardRow[] = [
  {
    label: 'SendMessage (new task)',
    method: 'SendMessage',
    version: '1.0',
    role: 'member',
    about: 'namespace',
    need: 'none',
    params: (t) => ({ ...tenantParam(t), message: wireMessageV1('tck-complete-task') }),
    check: (r) => expect(r.task.status.state).toBe('TASK_STATE_COMPLETED'),
  },
  {
    label: 'SendMessage (continuing a task)',
    method: 'SendMessage',
    version: '1.0',
    role: 'member',
    about: 'task',
    need: 'waiting',
    params: (t) => ({
      ...tenantParam(t),
      message: wireMessageV1('isolation-input', 'the input', { taskId: t.taskId }),
    }),
    check: (r, t) => expect(r.task).toMatchObject({ id: t.taskId, status: { state: 'TASK_STATE_COMPLETED' } }),
  },
  {
    label: 'SendStreamingMessage',
    method: 'SendStreamingMessage',
    version: '1.0',
    role: 'member',
    about: 'namespace',
    need: 'none',
    stream: true,
    params: (t) => ({ ...tenantParam(t), message: wireMessageV1('tck-stream-001') }),
    check: (r) => expect(r.task.id).toEqual(expect.any(String)),
  },
  {
    label: 'GetTask',
    method: 'GetTask',
    version: '1.0',
    role: 'viewer',
    about: 'task',
    need: 'completed',
    params: (t) => ({ ...tenantParam(t), id: t.taskId }),
    check: (r, t) => expect(r).toMatchObject({ id: t.taskId, status: { state: 'TASK_STATE_COMPLETED' } }),
  },
  {
    label: 'ListTasks',
    method: 'ListTasks',
    version: '1.0',
    role: 'viewer',
    about: 'namespace',
    need: 'none',
    params: (t) => ({ ...tenantParam(t), pageSize: 100 }),
    check: (r, _t, w, caller) => {
      const ids = (r.tasks as { id: string }[]).map((task) => task.id);
      expect(ids.filter((id) => w.foreignTasks(caller).includes(id))).toEqual([]);
      if (caller.role === 'viewer') expect(r.totalSize).toBe(0);
      else expect(ids.length).toBeGreaterThan(0);
    },
  },
  {
    label: 'CancelTask',
    method: 'CancelTask',
    version: '1.0',
    role: 'member',
    about: 'task',
    need: 'waiting',
    params: (t) => ({ ...tenantParam(t), id: t.taskId }),
    check: (r, t) => expect(r).toMatchObject({ id: t.taskId, status: { state: 'TASK_STATE_CANCELED' } }),
  },
  {
    label: 'SubscribeToTask',
    method: 'SubscribeToTask',
    version: '1.0',
    role: 'viewer',
    about: 'task',
    need: 'subscribable',
    stream: true,
    params: (t) => ({ ...tenantParam(t), id: t.taskId }),
    check: (r, t) => expect(r.task).toMatchObject({ id: t.taskId, status: { state: 'TASK_STATE_INPUT_REQUIRED' } }),
  },
  {
    label: 'CreateTaskPushNotificationConfig',
    method: 'CreateTaskPushNotificationConfig',
    version: '1.0',
    role: 'member',
    about: 'task',
    need: 'completed',
    params: (t) => ({ ...tenantParam(t), taskId: t.taskId, url: WEBHOOK }),
    check: (r, t) => expect(r).toMatchObject({ taskId: t.taskId, url: WEBHOOK, id: expect.any(String) }),
  },
  {
    label: 'GetTaskPushNotificationConfig',
    method: 'GetTaskPushNotificationConfig',
    version: '1.0',
    role: 'viewer',
    about: 'task',
    need: 'config',
    params: (t) => ({ ...tenantParam(t), taskId: t.taskId, id: t.configId }),
    check: (r, t) => expect(r).toMatchObject({ taskId: t.taskId, id: t.configId, url: WEBHOOK }),
  },
  {
    label: 'ListTaskPushNotificationConfigs',
    method: 'ListTaskPushNotificationConfigs',
    version: '1.0',
    role: 'viewer',
    about: 'task',
    need: 'config',
    params: (t) => ({ ...tenantParam(t), taskId: t.taskId }),
    check: (r, t) => expect((r.configs as { id: string }[]).map((c) => c.id)).toContain(t.configId),
  },
  {
    label: 'DeleteTaskPushNotificationConfig',
    method: 'DeleteTaskPushNotificationConfig',
    version: '1.0',
    role: 'member',
    about: 'task',
    need: 'fresh-config',
    params: (t) => ({ ...tenantParam(t), taskId: t.taskId, id: t.configId }),
    check: async (r, t, w, caller) => {
      expect(r).toBeNull();
      const left = await w.ok(caller, 'ListTaskPushNotificationConfigs', { ...tenantParam(t), taskId: t.taskId });
      expect((left.configs as { id: string }[]).map((c) => c.id)).not.toContain(t.configId);
    },
  },
  {
    label: 'GetExtendedAgentCard',
    method: 'GetExtendedAgentCard',
    version: '1.0',
    role: 'authenticated',
    about: 'card',
    need: 'none',
    params: (t) => ({ ...tenantParam(t) }),
    check: (r, _t, _w, caller) => expectCardFor(r, caller),
  },
  {
    label: 'message/send (v0.3, new task)',
    method: 'message/send',
    version: '0.3',
    role: 'member',
    about: 'namespace',
    need: 'none',
    params: () => ({ message: wireMessageV03('tck-complete-task') }),
    check: (r) => expect(r).toMatchObject({ kind: 'task', status: { state: 'completed' } }),
  },
  {
    label: 'message/send (v0.3, continuing a task)',
    method: 'message/send',
    version: '0.3',
    role: 'member',
    about: 'task',
    need: 'waiting',
    params: (t) => ({ message: wireMessageV03('isolation-input', 'the input', { taskId: t.taskId }) }),
    check: (r, t) => expect(r).toMatchObject({ kind: 'task', id: t.taskId, status: { state: 'completed' } }),
  },
  {
    label: 'message/stream (v0.3)',
    method: 'message/stream',
    version: '0.3',
    role: 'member',
    about: 'namespace',
    need: 'none',
    stream: true,
    params: () => ({ message: wireMessageV03('tck-stream-001') }),
    check: (r) => expect(r).toMatchObject({ kind: 'task', id: expect.any(String) }),
  },
  {
    label: 'tasks/get (v0.3)',
    method: 'tasks/get',
    version: '0.3',
    role: 'viewer',
    about: 'task',
    need: 'completed',
    params: (t) => ({ id: t.taskId }),
    check: (r, t) => expect(r).toMatchObject({ kind: 'task', id: t.taskId, status: { state: 'completed' } }),
  },
  {
    label: 'tasks/cancel (v0.3)',
    method: 'tasks/cancel',
    version: '0.3',
    role: 'member',
    about: 'task',
    need: 'waiting',
    params: (t) => ({ id: t.taskId }),
    check: (r, t) => expect(r).toMatchObject({ id: t.taskId, status: { state: 'canceled' } }),
  },
  {
    label: 'tasks/resubscribe (v0.3)',
    method: 'tasks/resubscribe',
    version: '0.3',
    role: 'viewer',
    about: 'task',
    need: 'subscribable',
    stream: true,
    params: (t) => ({ id: t.taskId }),
    check: (r, t) => expect(r).toMatchObject({ kind: 'task', id: t.taskId, status: { state: 'input-required' } }),
  },
  {
    label: 'tasks/pushNotificationConfig/set (v0.3)',
    method: 'tasks/pushNotificationConfig/set',
    version: '0.3',
    role: 'member',
    about: 'task',
    need: 'completed',
    params: (t) => ({ taskId: t.taskId, pushNotificationConfig: { url: WEBHOOK } }),
    check: (r, t) =>
      expect(r).toMatchObject({ taskId: t.taskId, pushNotificationConfig: { url: WEBHOOK, id: expect.any(String) } }),
  },
  {
    label: 'tasks/pushNotificationConfig/get (v0.3)',
    method: 'tasks/pushNotificationConfig/get',
    version: '0.3',
    role: 'viewer',
    about: 'task',
    need: 'config',
    params: (t) => ({ id: t.taskId, pushNotificationConfigId: t.configId }),
    check: (r, t) => expect(r).toMatchObject({ taskId: t.taskId, pushNotificationConfig: { id: t.configId } }),
  },
  {
    label: 'tasks/pushNotificationConfig/list (v0.3)',
    method: 'tasks/pushNotificationConfig/list',
    version: '0.3',
    role: 'viewer',
    about: 'task',
    need: 'config',
    params: (t) => ({ id: t.taskId }),
    check: (r, t) =>
      expect((r as { pushNotificationConfig: { id: string } }[]).map((c) => c.pushNotificationConfig.id)).toContain(
        t.configId,
      ),
  },
  {
    label: 'tasks/pushNotificationConfig/delete (v0.3)',
    method: 'tasks/pushNotificationConfig/delete',
    version: '0.3',
    role: 'member',
    about: 'task',
    need: 'fresh-config',
    params: (t) => ({ id: t.taskId, pushNotificationConfigId: t.configId }),
    check: async (r, t, w, caller) => {
      expect(r).toBeNull();
      const left = await w.ok(caller, 'tasks/pushNotificationConfig/list', { id: t.taskId });
      expect(
        (left as { pushNotificationConfig: { id: string } }[]).map((c) => c.pushNotificationConfig.id),
      ).not.toContain(t.configId);
    },
  },
  {
    label: 'agent/getAuthenticatedExtendedCard (v0.3)',
    method: 'agent/getAuthenticatedExtendedCard',
    version: '0.3',
    role: 'authenticated',
    about: 'card',
    need: 'none',
    params: () => ({}),
    check: (r) => expect(r).toMatchObject({ name: 'CleverAgents Server', protocolVersion: expect.any(String) }),
  },
];

/** A target that exists nowhere. */
function missingTarget(tenant: string | undefined): Target {
  return { tenant, taskId: `missing-${randomUUID()}`, configId: `missing-${randomUUID()}` };
}

/* ------------------------------------------------------------------------------------------------------ */
/* The extension methods                                                                                   */
/* ------------------------------------------------------------------------------------------------------ */

/** Keys made to be revoked by the revoke cells: id → key. */
const victims = new Map<string, string>();

interface ExtensionRow {
  method: string;
  role: Required;
  /** `parent`: the role is checked in the parent of `params.namespace` (creating a namespace). */
  scope?: 'parent';
  /**
   * Params addressing namespace `ns`; for `acme` a real target is made first (by the acme owner) where the
   * call needs one, so that a refusal is about a thing that exists. `tag` is the same for the requests a
   * cell compares.
   */
  params(w: World, ns: string, tag: string): Record<string, unknown> | Promise<Record<string, unknown>>;
  check(result: any, w: World, caller: Caller): void | Promise<void>;
  /**
   * The call addresses a session or plan of the acme member (both are scoped like tasks, docs/protocol.md §4):
   * every other caller the role admits finds nothing (-32001 SESSION_NOT_FOUND or PLAN_NOT_FOUND, as
   * for a missing one).
   */
  owned?: boolean;
  /** Roles that, besides the owner, reach what the member owns (the namespace's approvers: admin, owner). */
  sharedWith?: readonly Role[];
  /** What the session's owner gets, when not a result (`check` is then not used). */
  ownerAnswer?: (answer: Answer) => void;
}

/** A session of the acme member in `ns` (made now), or an id that exists nowhere. */
async function memberSession(w: World, ns: string, tag: string): Promise<string> {
  if (ns !== 'acme') return `missing-${tag}`;
  const made = await w.ok(w.acme.member, '_cleveragents/session/create', { namespace: ns, title: tag });
  return made.sessionId as string;
}

/** A plan of the acme member in `ns` (made now, a draft), or an id that exists nowhere. */
async function memberPlan(w: World, ns: string, tag: string): Promise<string> {
  if (ns !== 'acme') return `missing-${tag}`;
  const made = await w.ok(w.acme.member, '_cleveragents/plan/create', { namespace: ns, goal: `goal ${tag}` });
  return made.planId as string;
}

/**
 * A pending approval of the acme member in `ns` (recorded now, of a task that no longer waits), or an id that
 * exists nowhere. The conformance actor asks no approvals: the row is written as a gating turn writes it.
 */
async function memberApproval(w: World, ns: string, tag: string): Promise<string> {
  if (ns !== 'acme') return `missing-${tag}`;
  const approvalId = `approval-${tag}`;
  await w.server.app.get(DataSource).query(
    `INSERT INTO approvals (namespace, owner, id, session_id, task_id, request_id, subject, subject_hash, options)
     VALUES ('acme', $1, $2, $3, $4, 'approve-1', $5::jsonb, 'hash', '["approve","reject"]'::jsonb)`,
    [
      w.acme.member.subject,
      approvalId,
      `session-${tag}`,
      `task-${tag}`,
      JSON.stringify({ kind: 'tool', toolCallId: '1', tool: 'fs_read_text_file', args: { path: 'a' } }),
    ],
  );
  return approvalId;
}

/** The reason another caller gets for the acme member's session, plan or approval: the one for a missing one. */
function ownedReason(method: string): string {
  if (method.startsWith('_cleveragents/plan/')) return 'PLAN_NOT_FOUND';
  if (method.startsWith('_cleveragents/approval/')) return 'APPROVAL_NOT_FOUND';
  return 'SESSION_NOT_FOUND';
}

/** What another caller gets for the acme member's session or plan: the answer for a missing one. */
function expectOwnedNotFound(answer: Answer, method: string): void {
  expect({ status: answer.status, code: answer.json?.error?.code }).toEqual({ status: 200, code: -32001 });
  const reason = ownedReason(method);
  expect(answer.json.error.data[0]).toMatchObject({ reason });
}

/** A draft plan cannot be paused or resumed: past the role and owner checks, the state machine refuses. */
function expectDraftRefused(operation: string): (answer: Answer) => void {
  return (answer) => {
    expect({ status: answer.status, code: answer.json?.error?.code }).toEqual({ status: 200, code: -32004 });
    expect(answer.json.error.data[0]).toMatchObject({
      reason: 'INVALID_TRANSITION',
      metadata: { status: 'draft', operation },
    });
  };
}

/** The key of a tool `name` in `ns`, made first (by the acme owner) when `ns` is acme, for the cells that change one. */
async function toolToChange(w: World, ns: string, name: string): Promise<Record<string, unknown>> {
  const key = { namespace: ns, kind: 'tool', name };
  if (ns === 'acme') await w.ok(w.acme.owner, '_cleveragents/registry/create', { ...key, spec: TOOL_SPEC });
  return key;
}

const EXTENSION_ROWS: ExtensionRow[] = [
  {
    method: '_cleveragents/auth/whoami',
    role: 'authenticated',
    params: () => ({}),
    check: (r, w, caller) =>
      expect(r).toEqual({
        subject: caller.subject,
        displayName: expect.any(String),
        scheme: w.pass.scheme,
        defaultNamespace: caller.namespace,
        defaultNamespaceRole: caller.role,
        grants: [{ namespace: caller.namespace, role: caller.role }],
        apiKeyId: caller.id,
      }),
  },
  {
    method: '_cleveragents/auth/apikey/create',
    role: 'admin',
    params: (_w, ns, tag) => ({ namespace: ns, name: `made-${tag}`, role: 'viewer' }),
    check: async (r, w) => {
      expect(r).toMatchObject({ namespace: 'acme', role: 'viewer', key: expect.stringMatching(KEY_PATTERN) });
      const made = callerOf('made', r.key, 'acme', 'viewer');
      expect((await w.ok(made, '_cleveragents/auth/whoami')).defaultNamespaceRole).toBe('viewer');
    },
  },
  {
    method: '_cleveragents/auth/apikey/list',
    role: 'admin',
    params: (_w, ns) => ({ namespace: ns, pageSize: 100 }),
    check: (r, w) => {
      const ids = (r.items as { id: string }[]).map((item) => item.id);
      expect(ids).toEqual(expect.arrayContaining(ROLES.map((role) => w.acme[role].id)));
      expect(ids).not.toContain(w.globex.id);
      expect(ids).not.toContain(w.web.id);
      expect(r.items.filter((item: object) => 'key' in item || 'secretHash' in item)).toEqual([]);
      const text = JSON.stringify(r);
      for (const role of ROLES) expect(text).not.toContain(secretOf(w.acme[role].key));
    },
  },
  {
    method: '_cleveragents/auth/apikey/revoke',
    role: 'admin',
    params: async (w, ns, tag) => {
      if (ns !== 'acme') return { namespace: ns, id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' };
      const victim = await w.mintKey(w.acme.owner, 'acme', `victim-${tag}`, 'viewer');
      victims.set(victim.id, victim.key);
      return { namespace: ns, id: victim.id };
    },
    check: async (r, w, caller) => {
      expect(r).toMatchObject({ status: 'revoked', revokedBy: caller.subject, namespace: 'acme' });
      const gone = callerOf('victim', victims.get(r.id)!, 'acme', 'viewer');
      expect((await w.call(gone, '_cleveragents/auth/whoami')).status).toBe(401);
    },
  },
  {
    method: '_cleveragents/audit/list',
    role: 'admin',
    params: (_w, ns) => ({ namespace: ns, action: 'apikey.create', pageSize: 100 }),
    check: (r, w) => {
      const byTarget = new Map((r.items as { target: string; actor: string }[]).map((i) => [i.target, i.actor]));
      for (const role of ['admin', 'member', 'viewer'] as const) {
        expect(byTarget.get(w.acme[role].id)).toBe(w.acme.owner.subject);
      }
      expect(byTarget.get(w.acme.owner.id)).toBe(w.bootstrap.subject);
      expect(byTarget.has(w.globex.id)).toBe(false);
    },
  },
  {
    method: '_cleveragents/namespace/create',
    role: 'admin',
    scope: 'parent',
    params: (_w, ns, tag) => ({ namespace: `${ns}/made-${tag}` }),
    check: (r, _w, caller) =>
      expect(r).toMatchObject({
        namespace: expect.stringMatching(/^acme\/made-/),
        parent: 'acme',
        createdBy: caller.subject,
      }),
  },
  {
    method: '_cleveragents/namespace/get',
    role: 'viewer',
    params: (_w, ns) => ({ namespace: ns }),
    check: (r) => expect(r).toMatchObject({ namespace: 'acme', parent: null }),
  },
  {
    method: '_cleveragents/namespace/list',
    role: 'authenticated',
    params: () => ({ pageSize: 100 }),
    check: (r, _w, caller) => {
      const names = (r.items as { namespace: string }[]).map((n) => n.namespace);
      expect(names).toContain(caller.namespace);
      expect(names.filter((n) => !within(n, caller.namespace))).toEqual([]);
      expect(r.totalSize).toBe(names.length);
    },
  },
  {
    method: '_cleveragents/namespace/update',
    role: 'admin',
    params: (_w, ns, tag) => ({ namespace: ns, description: `touched ${tag}` }),
    check: (r) => expect(r).toMatchObject({ namespace: 'acme', description: expect.stringMatching(/^touched /) }),
  },
  {
    method: '_cleveragents/namespace/delete',
    role: 'owner',
    params: async (w, ns, tag) => {
      const namespace = `${ns}/doomed-${tag}`;
      if (ns === 'acme') await w.ok(w.acme.owner, '_cleveragents/namespace/create', { namespace });
      return { namespace };
    },
    check: (r) => expect(r).toEqual({ namespace: expect.stringMatching(/^acme\/doomed-/), deleted: true }),
  },
  {
    method: '_cleveragents/namespace/members/list',
    role: 'viewer',
    params: (_w, ns) => ({ namespace: ns }),
    check: (r, w) =>
      expect(r.items).toEqual(
        expect.arrayContaining([expect.objectContaining({ subject: w.bootstrap.subject, role: 'owner' })]),
      ),
  },
  {
    method: '_cleveragents/namespace/members/set',
    role: 'admin',
    params: (_w, ns, tag) => ({ namespace: ns, subject: `oidc:joiner-${tag}`, role: 'viewer' }),
    check: (r, _w, caller) => expect(r).toMatchObject({ namespace: 'acme', role: 'viewer', createdBy: caller.subject }),
  },
  {
    method: '_cleveragents/namespace/members/remove',
    role: 'admin',
    params: async (w, ns, tag) => {
      const subject = `oidc:leaver-${tag}`;
      if (ns === 'acme') {
        await w.ok(w.acme.owner, '_cleveragents/namespace/members/set', { namespace: ns, subject, role: 'viewer' });
      }
      return { namespace: ns, subject };
    },
    check: (r) => expect(r).toMatchObject({ namespace: 'acme', removed: true }),
  },
  {
    method: '_cleveragents/namespace/usage',
    role: 'admin',
    params: (_w, ns) => ({ namespace: ns, includeChildren: true }),
    check: (r) =>
      expect(r).toMatchObject({
        namespace: 'acme',
        includeChildren: true,
        totals: { sessions: expect.any(Number), tokens: expect.any(Number) },
      }),
  },
  {
    method: '_cleveragents/registry/create',
    role: 'member',
    params: (_w, ns, tag) => ({ namespace: ns, kind: 'tool', name: `made-${tag}`, spec: TOOL_SPEC }),
    check: (r, _w, caller) =>
      expect(r).toMatchObject({ namespace: 'acme', kind: 'tool', revision: 1, createdBy: caller.subject }),
  },
  {
    method: '_cleveragents/registry/get',
    role: 'viewer',
    params: (_w, ns) => ({ namespace: ns, kind: 'profile', name: 'manual' }),
    check: (r) =>
      expect(r).toMatchObject({ namespace: 'acme', kind: 'profile', name: 'manual', spec: { gate: 'manual' } }),
  },
  {
    method: '_cleveragents/registry/list',
    role: 'viewer',
    params: (_w, ns) => ({ namespace: ns, kind: 'profile' }),
    check: (r) =>
      expect(r).toMatchObject({
        items: ['autonomous', 'guarded', 'manual', 'supervised'].map((name) =>
          expect.objectContaining({ namespace: 'acme', name }),
        ),
        totalSize: 4,
      }),
  },
  {
    method: '_cleveragents/registry/update',
    role: 'member',
    params: async (w, ns, tag) => ({
      ...(await toolToChange(w, ns, `touched-${tag}`)),
      labels: { touched: 'yes' },
      expectedRevision: 1,
    }),
    check: (r, _w, caller) =>
      expect(r).toMatchObject({
        namespace: 'acme',
        labels: { touched: 'yes' },
        revision: 2,
        updatedBy: caller.subject,
      }),
  },
  {
    method: '_cleveragents/registry/delete',
    role: 'member',
    params: (w, ns, tag) => toolToChange(w, ns, `doomed-${tag}`),
    check: (r) => expect(r).toMatchObject({ namespace: 'acme', kind: 'tool', revision: 2, deleted: true }),
  },
  {
    method: '_cleveragents/sync/pull',
    role: 'viewer',
    params: (_w, ns) => ({ namespace: ns, cursor: 0, limit: 4 }),
    check: (r) => {
      expect(r.changes.map((c: { seq: number }) => c.seq)).toEqual([1, 2, 3, 4]);
      expect(r).toMatchObject({ cursor: 4, hasMore: true });
      expect(r.changes.every((c: any) => c.entity.namespace === 'acme')).toBe(true);
    },
  },
  {
    method: '_cleveragents/sync/push',
    role: 'member',
    params: (_w, ns, tag) => ({
      namespace: ns,
      changes: [{ kind: 'skill', name: `pushed-${tag}`, op: 'upsert', spec: { description: 'd', instructions: 'i' } }],
    }),
    check: (r) => expect(r).toEqual({ applied: [expect.objectContaining({ index: 0, revision: 1 })], conflicts: [] }),
  },
  {
    method: '_cleveragents/sync/status',
    role: 'viewer',
    params: (_w, ns) => ({ namespace: ns }),
    check: (r) => expect(r).toMatchObject({ namespace: 'acme', counts: { profile: 4, actor: 1 } }),
  },
  {
    method: '_cleveragents/session/create',
    role: 'member',
    params: (_w, ns, tag) => ({ namespace: ns, title: `made-${tag}` }),
    check: (r, _w, caller) =>
      expect(r).toMatchObject({ namespace: 'acme', owner: caller.subject, status: 'open', actor: 'default' }),
  },
  {
    method: '_cleveragents/session/list',
    role: 'viewer',
    params: (_w, ns) => ({ namespace: ns }),
    check: (r, _w, caller) => {
      expect(r.totalSize).toBe(r.items.length);
      expect(r.items.every((s: any) => s.namespace === 'acme' && s.owner === caller.subject)).toBe(true);
    },
  },
  {
    method: '_cleveragents/session/get',
    role: 'viewer',
    owned: true,
    params: async (w, ns, tag) => ({ namespace: ns, sessionId: await memberSession(w, ns, tag) }),
    check: (r, w) => expect(r).toMatchObject({ namespace: 'acme', owner: w.acme.member.subject, status: 'open' }),
  },
  {
    method: '_cleveragents/session/history',
    role: 'viewer',
    owned: true,
    params: async (w, ns, tag) => ({ namespace: ns, sessionId: await memberSession(w, ns, tag) }),
    check: (r) => expect(r).toEqual({ items: [], nextPageToken: '', totalSize: 0 }),
  },
  {
    method: '_cleveragents/session/close',
    role: 'member',
    owned: true,
    params: async (w, ns, tag) => ({ namespace: ns, sessionId: await memberSession(w, ns, tag) }),
    check: (r) => expect(r).toMatchObject({ namespace: 'acme', status: 'closed', revision: 2 }),
  },
  {
    method: '_cleveragents/session/update',
    role: 'member',
    owned: true,
    params: async (w, ns, tag) => ({ namespace: ns, sessionId: await memberSession(w, ns, tag), title: 'renamed' }),
    check: (r) => expect(r).toMatchObject({ namespace: 'acme', title: 'renamed', revision: 2 }),
  },
  {
    method: '_cleveragents/context/assemble',
    role: 'viewer',
    owned: true,
    params: async (w, ns, tag) => ({ namespace: ns, sessionId: await memberSession(w, ns, tag) }),
    check: () => undefined,
    // This server runs the conformance actor, which calls no model: past both checks, the service says so.
    ownerAnswer: (answer) => {
      expect({ status: answer.status, code: answer.json?.error?.code }).toEqual({ status: 200, code: -32004 });
      expect(answer.json.error.data[0]).toMatchObject({ reason: 'NO_MODEL_CONTEXT' });
    },
  },
  {
    method: '_cleveragents/approval/list',
    role: 'viewer',
    params: (_w, ns) => ({ namespace: ns, state: 'pending' }),
    check: (r, _w, caller) => {
      expect(r.totalSize).toBe(r.items.length);
      expect(r.items.every((a: any) => a.namespace === 'acme' && a.requester === caller.subject)).toBe(true);
    },
  },
  {
    method: '_cleveragents/approval/get',
    role: 'viewer',
    owned: true,
    sharedWith: ['admin', 'owner'],
    params: async (w, ns, tag) => ({ namespace: ns, approvalId: await memberApproval(w, ns, tag) }),
    check: (r, w) => expect(r).toMatchObject({ namespace: 'acme', requester: w.acme.member.subject, state: 'pending' }),
  },
  {
    method: '_cleveragents/approval/answer',
    role: 'member',
    owned: true,
    sharedWith: ['admin', 'owner'],
    params: async (w, ns, tag) => ({
      namespace: ns,
      approvalId: await memberApproval(w, ns, tag),
      decision: 'approve',
    }),
    check: () => undefined,
    // Past both checks: the approval's task waits no more, so the approval ends unanswered and nothing runs.
    ownerAnswer: (answer) => {
      expect({ status: answer.status, code: answer.json?.error?.code }).toEqual({ status: 200, code: -32004 });
      expect(answer.json.error.data[0]).toMatchObject({ reason: 'ALREADY_ANSWERED', metadata: { state: 'canceled' } });
    },
  },
  {
    method: '_cleveragents/approval/webhook/create',
    role: 'admin',
    params: (_w, ns, tag) => ({ namespace: ns, url: `http://127.0.0.1:9/hook-${tag}` }),
    check: (r, _w, caller) =>
      expect(r).toMatchObject({
        namespace: 'acme',
        origin: 'http://127.0.0.1:9',
        createdBy: caller.subject,
        secret: expect.stringMatching(/^whsec_/),
      }),
  },
  {
    method: '_cleveragents/approval/webhook/list',
    role: 'admin',
    params: (_w, ns) => ({ namespace: ns }),
    check: (r) => {
      expect(r.items.length).toBeGreaterThan(0);
      expect(r.items.every((h: any) => h.namespace === 'acme' && !('secret' in h))).toBe(true);
      expect(JSON.stringify(r)).not.toContain('/hook-');
    },
  },
  {
    method: '_cleveragents/approval/webhook/delete',
    role: 'admin',
    params: async (w, ns, tag) => {
      if (ns !== 'acme') return { namespace: ns, id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' };
      const made = await w.ok(w.acme.owner, '_cleveragents/approval/webhook/create', {
        namespace: ns,
        url: `http://127.0.0.1:9/victim-${tag}`,
      });
      return { namespace: ns, id: made.id };
    },
    check: async (r, w) => {
      expect(r).toMatchObject({ namespace: 'acme', origin: 'http://127.0.0.1:9' });
      const left = await w.ok(w.acme.owner, '_cleveragents/approval/webhook/list', { namespace: 'acme' });
      expect(left.items.map((h: { id: string }) => h.id)).not.toContain(r.id);
    },
  },
  {
    method: '_cleveragents/plan/create',
    role: 'member',
    params: (_w, ns, tag) => ({ namespace: ns, goal: `made-${tag}` }),
    check: (r, _w, caller) =>
      expect(r).toMatchObject({ namespace: 'acme', owner: caller.subject, status: 'draft', revision: 1 }),
  },
  {
    method: '_cleveragents/plan/list',
    role: 'viewer',
    params: (_w, ns) => ({ namespace: ns }),
    check: (r, _w, caller) => {
      expect(r.totalSize).toBe(r.items.length);
      expect(r.items.every((p: any) => p.namespace === 'acme' && p.owner === caller.subject)).toBe(true);
    },
  },
  {
    method: '_cleveragents/plan/get',
    role: 'viewer',
    owned: true,
    params: async (w, ns, tag) => ({ namespace: ns, planId: await memberPlan(w, ns, tag) }),
    check: (r, w) => expect(r).toMatchObject({ namespace: 'acme', owner: w.acme.member.subject, status: 'draft' }),
  },
  {
    method: '_cleveragents/plan/status',
    role: 'viewer',
    owned: true,
    params: async (w, ns, tag) => ({ namespace: ns, planId: await memberPlan(w, ns, tag) }),
    check: (r) => expect(r).toMatchObject({ status: 'draft', revision: 1, taskId: null }),
  },
  {
    method: '_cleveragents/plan/update',
    role: 'member',
    owned: true,
    params: async (w, ns, tag) => ({ namespace: ns, planId: await memberPlan(w, ns, tag), goal: `changed ${tag}` }),
    check: (r) => expect(r).toMatchObject({ namespace: 'acme', status: 'draft', revision: 2 }),
  },
  {
    method: '_cleveragents/plan/approve',
    role: 'member',
    owned: true,
    params: async (w, ns, tag) => ({ namespace: ns, planId: await memberPlan(w, ns, tag) }),
    check: (r) => expect(r).toMatchObject({ namespace: 'acme', status: 'approved', revision: 2 }),
  },
  {
    method: '_cleveragents/plan/execute',
    role: 'member',
    owned: true,
    params: async (w, ns, tag) => ({ namespace: ns, planId: await memberPlan(w, ns, tag) }),
    check: () => undefined,
    // This server runs the conformance actor: past the role and owner checks, the plan cannot run here.
    ownerAnswer: (answer) => {
      expect({ status: answer.status, code: answer.json?.error?.code }).toEqual({ status: 200, code: -32008 });
      expect(answer.json.error.data[0]).toMatchObject({ reason: 'NO_ORCHESTRATOR' });
    },
  },
  {
    method: '_cleveragents/plan/pause',
    role: 'member',
    owned: true,
    params: async (w, ns, tag) => ({ namespace: ns, planId: await memberPlan(w, ns, tag) }),
    check: () => undefined,
    ownerAnswer: expectDraftRefused('pause'),
  },
  {
    method: '_cleveragents/plan/resume',
    role: 'member',
    owned: true,
    params: async (w, ns, tag) => ({ namespace: ns, planId: await memberPlan(w, ns, tag) }),
    check: () => undefined,
    ownerAnswer: expectDraftRefused('resume'),
  },
  {
    method: '_cleveragents/plan/cancel',
    role: 'member',
    owned: true,
    params: async (w, ns, tag) => ({ namespace: ns, planId: await memberPlan(w, ns, tag) }),
    check: (r) => expect(r).toMatchObject({ namespace: 'acme', status: 'canceled', revision: 2 }),
  },
  {
    method: '_cleveragents/plan/delete',
    role: 'member',
    owned: true,
    params: async (w, ns, tag) => ({ namespace: ns, planId: await memberPlan(w, ns, tag) }),
    check: (r) => expect(r).toEqual({ planId: expect.any(String), deleted: true }),
  },
  {
    method: '_cleveragents/diagnostics/health',
    role: 'authenticated',
    params: () => ({}),
    check: (r) => expect(r).toMatchObject({ status: 'ok', checks: { database: { ok: true } } }),
  },
  {
    method: '_cleveragents/diagnostics/info',
    role: 'authenticated',
    params: () => ({}),
    check: (r, w) => expect(r).toMatchObject({ database: { kind: w.target.kind } }),
  },
];

function verdict(
  role: Role,
  required: Required,
  about?: StandardRow['about'],
  owned?: boolean,
  sharedWith: readonly Role[] = [],
): string {
  if (!mayCall(role, required)) return 'refused (403, -32003)';
  if (owned && sharedWith.includes(role)) return "allowed: the member's, for the namespace's approvers";
  if (owned && role !== 'member') return "allowed; the member's own session or plan is -32001, as a missing one";
  // A viewer owns no task (it may not create one): past the role check it finds nothing of anyone else's.
  if (about === 'task' && role === 'viewer') return "allowed; another's task is -32001, as a missing one";
  return 'allowed (200 + result)';
}

/* ------------------------------------------------------------------------------------------------------ */

describe.each(databaseTargets())('isolation matrix over HTTP on $kind', (target) => {
  describe.each(PASSES)('API keys presented with the $scheme scheme', (pass) => {
    const w = new World(target, pass);

    beforeAll(() => w.open(), 60000);
    afterAll(() => w.close());

    it('every extension method the Agent Card declares has a row here, and every row is declared', async () => {
      const card: any = await (await fetch(`${w.server.baseUrl}/.well-known/agent-card.json`)).json();
      const declared: string[] = card.capabilities.extensions[0].params.methods;
      const rows = EXTENSION_ROWS.map((row) => row.method);
      expect(declared.filter((method) => !rows.includes(method))).toEqual([]);
      expect(rows.filter((method) => !declared.includes(method))).toEqual([]);
    });

    describe('standard A2A operations: each acme role against acme', () => {
      describe.each(STANDARD_ROWS)('$label', (row) => {
        const tenant = row.version === '1.0' ? 'acme' : undefined;
        it.each(ROLES.map((role) => ({ role, verdict: verdict(role, row.role, row.about) })))(
          'acme $role: $verdict',
          async ({ role }) => {
            const caller = w.acme[role];
            if (!mayCall(role, row.role)) {
              // A refusal names the role, not the task: the same answer for a task that exists and one that does not.
              const real = await w.call(caller, row.method, row.params(await w.othersTarget(row.need, tenant)));
              expectRoleRequired(real, row.role as Role, role, 'acme');
              if (row.about === 'task') {
                const missing = await w.call(caller, row.method, row.params(missingTarget(tenant)));
                expect(visible(missing)).toBe(visible(real));
              }
              return;
            }
            if (row.about === 'task' && role === 'viewer') {
              // A viewer passes the role check, then sees no task but its own, and owns none (docs/protocol.md §4):
              // the member's task is answered exactly as a task that does not exist.
              const others = await w.othersTarget(row.need, tenant);
              const missing = missingTarget(tenant);
              const real = await w.call(caller, row.method, row.params(others));
              expectTaskNotFound(real, row);
              const none = await w.call(caller, row.method, row.params(missing));
              expect(visible(real, others.taskId)).toBe(visible(none, missing.taskId));
              return;
            }
            const t = await w.targetFor(row.need, caller, tenant);
            const answer = await w.call(caller, row.method, row.params(t));
            const result = expectAllowed(answer);
            expect(answer.streamed).toBe(row.stream === true);
            await row.check(result, t, w, caller);
          },
        );
      });
    });

    describe('extension methods: each acme role against acme', () => {
      describe.each(EXTENSION_ROWS)('$method', (row) => {
        it.each(
          ROLES.map((role) => ({ role, verdict: verdict(role, row.role, undefined, row.owned, row.sharedWith) })),
        )('acme $role: $verdict', async ({ role }) => {
          const caller = w.acme[role];
          const params = await row.params(w, 'acme', w.next(role));
          const answer = await w.call(caller, row.method, params);
          if (!mayCall(role, row.role)) {
            const addressed = typeof params.namespace === 'string' ? params.namespace : caller.namespace;
            const checkedIn = row.scope === 'parent' ? addressed.slice(0, addressed.lastIndexOf('/')) : addressed;
            expect(within(checkedIn, 'acme')).toBe(true);
            expectRoleRequired(answer, row.role as Role, role, checkedIn);
            return;
          }
          if (row.owned && caller !== w.acme.member && !(row.sharedWith ?? []).includes(role)) {
            expectOwnedNotFound(answer, row.method);
            return;
          }
          if (row.ownerAnswer) return row.ownerAnswer(answer);
          await row.check(expectAllowed(answer), w, caller);
        });
      });
    });

    describe('the globex owner against acme', () => {
      /** The acme member's shared task and configs as they were before the globex owner tried anything. */
      let before: { task: unknown; configs: unknown };
      const memberState = async () => {
        const waiting = await w.sharedTask(w.acme.member, 'waiting');
        const config = await w.sharedConfig(w.acme.member);
        return {
          task: await w.ok(w.acme.member, 'GetTask', { tenant: 'acme', id: waiting.id }),
          configs: await w.ok(w.acme.member, 'ListTaskPushNotificationConfigs', {
            tenant: 'acme',
            taskId: config.taskId,
          }),
        };
      };
      beforeAll(async () => {
        before = await memberState();
      });

      const taskRows = STANDARD_ROWS.filter((row) => row.about === 'task');
      it.each(taskRows)('$label about an acme task: indistinguishable from a task that does not exist', async (row) => {
        const tenant = row.version === '1.0' ? 'acme' : undefined;
        const real = await w.othersTarget(row.need, tenant);
        /** Who asks, for what: each answer is compared with the tokens that differ (task and config ids) masked. */
        const ask = async (caller: Caller, t: Target) =>
          visible(await w.call(caller, row.method, row.params(t)), t.taskId, t.configId);
        const hidden = await w.call(w.globex, row.method, row.params(real));
        expectTaskNotFound(hidden, row);
        expect(hidden.json.error.message).toBe(`Task not found: ${real.taskId}`);
        expect({
          // the acme member's real task, asked for in acme (v0.3 has no tenant: asked for in globex)
          real: visible(hidden, real.taskId, real.configId),
          // a task id that exists nowhere, asked for in acme
          missing: await ask(w.globex, missingTarget(tenant)),
          // the same in globex's own namespace, where the SDK itself looks and finds nothing
          ownMissing: await ask(w.globex, missingTarget(undefined)),
          // an acme member asking for a task that does not exist
          memberMissing: await ask(w.acme.member, missingTarget(tenant)),
        }).toEqual({
          real: visible(hidden, real.taskId, real.configId),
          missing: visible(hidden, real.taskId, real.configId),
          ownMissing: visible(hidden, real.taskId, real.configId),
          memberMissing: visible(hidden, real.taskId, real.configId),
        });
      });

      const namespaceRows = STANDARD_ROWS.filter((row) => row.about === 'namespace' && row.version === '1.0');
      it.each(namespaceRows)('$label with tenant acme: -32001, as for a namespace that does not exist', async (row) => {
        const acme = await w.call(w.globex, row.method, row.params({ tenant: 'acme', taskId: '', configId: '' }));
        expectNamespaceNotFound(acme, 'acme');
        const nowhere = await w.call(w.globex, row.method, row.params({ tenant: NOWHERE, taskId: '', configId: '' }));
        expect(visible(acme, 'acme')).toBe(visible(nowhere, NOWHERE));
      });

      it('GetExtendedAgentCard, even with tenant acme, lists globex only', async () => {
        const card = await w.ok(w.globex, 'GetExtendedAgentCard', { tenant: 'acme' });
        expect(cardTenants(card)).toEqual(['globex']);
      });

      const namespaced = EXTENSION_ROWS.filter((row) => row.role !== 'authenticated');
      it.each(namespaced)('$method on acme: -32001, as for a namespace that does not exist', async (row) => {
        const tag = w.next('globex');
        const acme = await w.call(w.globex, row.method, await row.params(w, 'acme', tag));
        expectNamespaceNotFound(acme, 'acme');
        const nowhere = await w.call(w.globex, row.method, await row.params(w, NOWHERE, tag));
        expect(visible(acme, 'acme')).toBe(visible(nowhere, NOWHERE));
      });

      const open = EXTENSION_ROWS.filter((row) => row.role === 'authenticated');
      it.each(open)('$method (any authenticated caller) answers about globex only', async (row) => {
        await row.check(await w.ok(w.globex, row.method, await row.params(w, 'acme', w.next('globex'))), w, w.globex);
      });

      it("left the acme member's tasks and push configs as they were", async () => {
        const after = await memberState();
        expect(after).toEqual(before);
        expect((after.task as { status: { state: string } }).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
        const config = await w.sharedConfig(w.acme.member);
        expect((after.configs as { configs: { id: string }[] }).configs.map((c) => c.id)).toContain(config.configId);
      });
    });

    describe('inheritance down the namespace tree', () => {
      it('the acme admin acts in acme/web, and what it does there stays in acme/web', async () => {
        const admin = w.acme.admin;
        const made = await w.ok(admin, 'SendMessage', {
          tenant: 'acme/web',
          message: wireMessageV1('tck-complete-task'),
        });
        const id = made.task.id as string;
        expect((await w.ok(admin, 'GetTask', { tenant: 'acme/web', id })).id).toBe(id);
        const listed = await w.ok(admin, 'ListTasks', { tenant: 'acme/web' });
        expect((listed.tasks as { id: string }[]).map((t) => t.id)).toEqual([id]);
        // The same id in acme is another scope: not found there.
        const inAcme = await w.call(admin, 'GetTask', { tenant: 'acme', id });
        expectTaskNotFound(inAcme);
        expect(
          (await w.ok(admin, 'ListTasks', { tenant: 'acme' })).tasks.map((t: { id: string }) => t.id),
        ).not.toContain(id);
        const updated = await w.ok(admin, '_cleveragents/namespace/update', {
          namespace: 'acme/web',
          description: 'by the acme admin',
        });
        expect(updated).toMatchObject({ namespace: 'acme/web', description: 'by the acme admin' });
        const keys = await w.ok(admin, '_cleveragents/auth/apikey/list', { namespace: 'acme/web' });
        expect(keys.items.map((k: { id: string }) => k.id)).toEqual([w.web.id]);
        const audit = await w.ok(admin, '_cleveragents/audit/list', { namespace: 'acme/web', action: 'apikey.create' });
        expect(audit.items).toEqual([expect.objectContaining({ target: w.web.id, actor: w.acme.owner.subject })]);
      });

      it('the acme member and viewer keep their roles in acme/web', async () => {
        const sent = await w.ok(w.acme.member, 'SendMessage', {
          tenant: 'acme/web',
          message: wireMessageV1('tck-complete-task'),
        });
        expect(sent.task.status.state).toBe('TASK_STATE_COMPLETED');
        const refused = await w.call(w.acme.viewer, 'SendMessage', {
          tenant: 'acme/web',
          message: wireMessageV1('tck-complete-task'),
        });
        expectRoleRequired(refused, 'member', 'viewer', 'acme/web');
        expect((await w.ok(w.acme.viewer, 'ListTasks', { tenant: 'acme/web' })).totalSize).toBe(0);
        const update = await w.call(w.acme.member, '_cleveragents/namespace/update', {
          namespace: 'acme/web',
          description: 'x',
        });
        expectRoleRequired(update, 'admin', 'member', 'acme/web');
      });

      it('the acme/web key, an admin there, has no role in acme', async () => {
        const web = w.web;
        expect(await w.ok(web, '_cleveragents/auth/whoami')).toMatchObject({
          defaultNamespace: 'acme/web',
          grants: [{ namespace: 'acme/web', role: 'admin' }],
        });
        const compare = async (method: string, params: (ns: string) => Record<string, unknown>) => {
          const acme = await w.call(web, method, params('acme'));
          expectNamespaceNotFound(acme, 'acme');
          expect(visible(acme, 'acme')).toBe(visible(await w.call(web, method, params(NOWHERE)), NOWHERE));
        };
        await compare('_cleveragents/namespace/get', (ns) => ({ namespace: ns }));
        await compare('_cleveragents/auth/apikey/list', (ns) => ({ namespace: ns }));
        await compare('_cleveragents/auth/apikey/create', (ns) => ({ namespace: ns, name: 'upward', role: 'viewer' }));
        await compare('_cleveragents/audit/list', (ns) => ({ namespace: ns }));
        await compare('_cleveragents/namespace/usage', (ns) => ({ namespace: ns }));
        // Creating a sibling is checked in the parent, acme; a child of acme/web in acme/web.
        await compare('_cleveragents/namespace/create', (ns) => ({ namespace: `${ns}/sibling` }));
        expect(await w.ok(web, '_cleveragents/namespace/create', { namespace: 'acme/web/team' })).toMatchObject({
          namespace: 'acme/web/team',
          parent: 'acme/web',
        });
        await compare('SendMessage', (ns) => ({ tenant: ns, message: wireMessageV1('tck-complete-task') }));
        await compare('ListTasks', (ns) => ({ tenant: ns }));
        // About an acme task: the answer a task that does not exist gets.
        const memberTask = await w.sharedTask(w.acme.member, 'completed');
        const hidden = await w.call(web, 'GetTask', { tenant: 'acme', id: memberTask.id });
        expectTaskNotFound(hidden);
        const missing = `missing-${randomUUID()}`;
        const none = await w.call(web, 'GetTask', { tenant: 'acme/web', id: missing });
        expect(visible(hidden, memberTask.id)).toBe(visible(none, missing));
      });
    });

    describe('tenant selection', () => {
      it("without tenant a call acts in the key's own namespace", async () => {
        const member = w.acme.member;
        const sent = await w.ok(member, 'SendMessage', { message: wireMessageV1('tck-input-required') });
        const id = sent.task.id as string;
        w.recordTask(member, id);
        const before = await w.ok(member, 'GetTask', { id });
        expect((await w.ok(member, 'GetTask', { tenant: 'acme', id })).id).toBe(id);
        expect((await w.ok(member, 'GetTask', { id })).id).toBe(id);
        expectTaskNotFound(await w.call(member, 'GetTask', { tenant: 'acme/web', id }));
        // v0.3 has no tenant: the key's namespace, the same store.
        expect(await w.ok(member, 'tasks/get', { id })).toMatchObject({ id, status: { state: 'input-required' } });

        // The globex owner, knowing the id, acts in globex: nothing there, as for an id never used.
        const missing = `missing-${randomUUID()}`;
        const byId = await w.call(w.globex, 'GetTask', { id });
        expectTaskNotFound(byId);
        expect(visible(byId, id)).toBe(visible(await w.call(w.globex, 'GetTask', { id: missing }), missing));
        const cancel = await w.call(w.globex, 'CancelTask', { id });
        expect(visible(cancel, id)).toBe(visible(await w.call(w.globex, 'CancelTask', { id: missing }), missing));
        const followUp = await w.call(w.globex, 'SendMessage', {
          message: wireMessageV1('isolation-input', 'hijack', { taskId: id }),
        });
        expectTaskNotFound(followUp);
        const listed = await w.ok(w.globex, 'ListTasks', { pageSize: 100 });
        expect(listed.tasks.map((t: { id: string }) => t.id)).not.toContain(id);
        // ...and the member's task is as it was.
        expect(await w.ok(member, 'GetTask', { id })).toEqual(before);
        expect(before.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      });

      it('the globex owner works in globex, and acme cannot see it', async () => {
        const sent = await w.ok(w.globex, 'message/send', { message: wireMessageV03('tck-complete-task') });
        const id = sent.id as string;
        expect((await w.ok(w.globex, 'GetTask', { tenant: 'globex', id })).id).toBe(id);
        const missing = `missing-${randomUUID()}`;
        for (const tenant of [undefined, 'globex']) {
          const params = (taskId: string) => ({ ...(tenant ? { tenant } : {}), id: taskId });
          const hidden = await w.call(w.acme.owner, 'GetTask', params(id));
          expectTaskNotFound(hidden);
          expect(visible(hidden, id)).toBe(visible(await w.call(w.acme.owner, 'GetTask', params(missing)), missing));
        }
        expectNamespaceNotFound(await w.call(w.acme.owner, 'ListTasks', { tenant: 'globex' }), 'globex');
      });
    });

    describe('GetExtendedAgentCard', () => {
      it('lists, for the acme member, acme and acme/web with tenant set, and not globex', async () => {
        const card = await w.ok(w.acme.member, 'GetExtendedAgentCard', {});
        const tenants = cardTenants(card);
        expect(tenants).toEqual(expect.arrayContaining(['acme', 'acme/web']));
        expect(tenants).not.toContain('globex');
        expect(tenants).not.toContain('default');
        expect(tenants.filter((t) => !within(t, 'acme'))).toEqual([]);
        const endpoint = w.server.endpoint;
        expect(card.supportedInterfaces).toEqual(
          expect.arrayContaining([
            { url: endpoint, protocolBinding: 'JSONRPC', tenant: 'acme', protocolVersion: '1.0' },
            { url: endpoint, protocolBinding: 'JSONRPC', tenant: 'acme/web', protocolVersion: '1.0' },
          ]),
        );
      });

      it('lists acme/web (and below) for the acme/web key, globex for the globex owner', async () => {
        const web = cardTenants(await w.ok(w.web, 'GetExtendedAgentCard', {}));
        expect(web).toContain('acme/web');
        expect(web.filter((t) => !within(t, 'acme/web'))).toEqual([]);
        expect(cardTenants(await w.ok(w.globex, 'GetExtendedAgentCard', {}))).toEqual(['globex']);
      });
    });

    describe('namespace/list and audit/list', () => {
      const names = async (caller: Caller): Promise<string[]> =>
        (await w.ok(caller, '_cleveragents/namespace/list', { pageSize: 100 })).items.map(
          (n: { namespace: string }) => n.namespace,
        );

      it('namespace/list shows each caller its own namespace and those below, nothing else', async () => {
        for (const role of ROLES) {
          const seen = await names(w.acme[role]);
          expect(seen).toEqual(expect.arrayContaining(['acme', 'acme/web']));
          expect(seen.filter((n) => !within(n, 'acme'))).toEqual([]);
        }
        const web = await names(w.web);
        expect(web).toContain('acme/web');
        expect(web.filter((n) => !within(n, 'acme/web'))).toEqual([]);
        expect(await names(w.globex)).toEqual(['globex']);
        // The bootstrap key owns default, and created acme and globex: it is their owner member.
        const bootstrap = await names(w.bootstrap);
        expect(bootstrap).toEqual(expect.arrayContaining(['default', 'acme', 'acme/web', 'globex']));
        expect(bootstrap.filter((n) => !['default', 'acme', 'globex'].some((root) => within(n, root)))).toEqual([]);
      });

      it('audit/list is for admins, and shows the key creations of the setup with their actor', async () => {
        const audit = await w.ok(w.acme.admin, '_cleveragents/audit/list', {
          namespace: 'acme',
          action: 'apikey.create',
          pageSize: 100,
        });
        const setup = new Map(
          ['acme-owner', 'acme-admin', 'acme-member', 'acme-viewer', 'doomed', 'short-lived'].map((name) => [name, '']),
        );
        for (const item of audit.items as { details: { name: string }; actor: string }[]) {
          if (setup.has(item.details.name)) setup.set(item.details.name, item.actor);
        }
        const owner = w.acme.owner.subject;
        expect(Object.fromEntries(setup)).toEqual({
          'acme-owner': w.bootstrap.subject,
          'acme-admin': owner,
          'acme-member': owner,
          'acme-viewer': owner,
          doomed: owner,
          'short-lived': owner,
        });
        expect(audit.items.find((item: { target: string }) => item.target === w.acme.admin.id)).toMatchObject({
          namespace: 'acme',
          action: 'apikey.create',
          details: { name: 'acme-admin', role: 'admin' },
          requestId: expect.any(String),
        });
        expectRoleRequired(
          await w.call(w.acme.member, '_cleveragents/audit/list', { namespace: 'acme' }),
          'admin',
          'member',
          'acme',
        );
        const globex = await w.ok(w.globex, '_cleveragents/audit/list', {
          namespace: 'globex',
          action: 'apikey.create',
        });
        expect(globex.items).toEqual([
          expect.objectContaining({ target: w.globex.id, actor: w.bootstrap.subject, namespace: 'globex' }),
        ]);
      });
    });

    describe('authentication', () => {
      it('no credentials: HTTP 401, WWW-Authenticate, -32002, for standard and extension methods alike', async () => {
        for (const [method, params] of [
          ['GetTask', { id: 'x' }],
          ['GetExtendedAgentCard', {}],
          ['message/send', { message: wireMessageV03('tck-complete-task') }],
          ['_cleveragents/auth/whoami', {}],
          ['_cleveragents/namespace/list', {}],
        ] as const) {
          const answer = await w.call(undefined, method, params);
          expect({ method, status: answer.status, code: answer.json?.error?.code }).toEqual({
            method,
            status: 401,
            code: -32002,
          });
          expect(answer.headers.get('www-authenticate')).toMatch(pass.challenge);
          expect(reasonOf(answer)).toBe('AUTHENTICATION_REQUIRED');
        }
      });

      it("the other scheme's header is not a credential here; a forged key is refused", async () => {
        const foreign = await post(
          w.server.endpoint,
          { jsonrpc: '2.0', id: 1, method: '_cleveragents/auth/whoami' },
          pass.foreign(w.acme.owner.key),
        );
        expect({ status: foreign.status, code: foreign.json.error.code }).toEqual({ status: 401, code: -32002 });
        const forged = `${w.acme.owner.key.slice(0, -4)}AAAA`;
        const answer = await post(
          w.server.endpoint,
          { jsonrpc: '2.0', id: 2, method: '_cleveragents/auth/whoami' },
          pass.credential(forged),
        );
        expect({ status: answer.status, code: answer.json.error.code }).toEqual({ status: 401, code: -32002 });
        expect(answer.headers.get('www-authenticate')).toMatch(pass.challenge);
      });

      it('a revoked key is refused on the very next request', async () => {
        const doomed = w.doomed;
        expect((await w.ok(doomed, 'ListTasks', {})).totalSize).toBe(0);
        const revoked = await w.ok(w.acme.admin, '_cleveragents/auth/apikey/revoke', { id: doomed.id });
        expect(revoked).toMatchObject({ id: doomed.id, status: 'revoked', revokedBy: w.acme.admin.subject });
        const next = await w.call(doomed, 'ListTasks', {});
        expect({ status: next.status, code: next.json.error.code }).toEqual({ status: 401, code: -32002 });
        expect(next.headers.get('www-authenticate')).toMatch(pass.challenge);
        const extension = await w.call(doomed, '_cleveragents/auth/whoami');
        expect(extension.status).toBe(401);
      });

      it('an expired key is refused', async () => {
        const time = holdWallTime();
        try {
          time.advance(Math.max(0, w.shortLivedUntil - Date.now()));
          for (const method of ['ListTasks', '_cleveragents/auth/whoami']) {
            const answer = await w.call(w.shortLived, method, {});
            expect({ method, status: answer.status, code: answer.json.error.code }).toEqual({
              method,
              status: 401,
              code: -32002,
            });
          }
          const listed = await w.ok(w.acme.owner, '_cleveragents/auth/apikey/list', {
            namespace: 'acme',
            pageSize: 100,
          });
          expect(listed.items.find((k: { id: string }) => k.id === w.shortLived.id)).toMatchObject({
            status: 'expired',
          });
        } finally {
          time.release();
        }
      });
    });

    /*
     * The role check and the store must read the same namespace: the SDK reads `tenant` on v1.0 only, so
     * the dispatcher does too, and refuses a non-string one. These cases once found that they did not.
     */
    describe('the role check and the store read the same tenant', () => {
      let split: Caller;

      it('preconditions: a key that is viewer in acme and member in globex; a namespace 4711 the globex owner has no role in', async () => {
        const made = await w.mintKey(w.acme.owner, 'acme', w.next('split-viewer'), 'viewer');
        split = callerOf('split viewer', made.key, 'acme', 'viewer');
        await w.ok(w.globex, '_cleveragents/namespace/members/set', {
          namespace: 'globex',
          subject: split.subject,
          role: 'member',
        });
        const whoami = await w.ok(split, '_cleveragents/auth/whoami');
        expect(whoami.grants).toEqual(
          expect.arrayContaining([
            { namespace: 'acme', role: 'viewer' },
            { namespace: 'globex', role: 'member' },
          ]),
        );
        expectRoleRequired(
          await w.call(split, 'message/send', { message: wireMessageV03('tck-complete-task') }),
          'member',
          'viewer',
          'acme',
        );
        expect((await w.ok(split, 'ListTasks', { tenant: 'acme' })).totalSize).toBe(0);

        await w.ok(w.bootstrap, '_cleveragents/namespace/create', { namespace: '4711' });
        expectNamespaceNotFound(await w.call(w.globex, 'ListTasks', { tenant: '4711' }), '4711');
      });

      // v0.3 has no tenant, and the SDK's v0.3 handler ignores one: the call acts in the key's own namespace
      // (acme, where it is a viewer), and that is where the role is checked.
      it('a v0.3 call with a stray tenant is checked in the namespace it acts in', async () => {
        await w.call(split, 'message/send', { tenant: 'globex', message: wireMessageV03('tck-complete-task') });
        // Refused, or (had the tenant been honoured) a task in globex: never a task a viewer made in acme.
        expect((await w.ok(split, 'ListTasks', { tenant: 'acme' })).totalSize).toBe(0);
      });

      // The SDK would set any truthy tenant on the call context, and the store would write into "4711".
      it('a non-string tenant is refused, never used to write into a namespace the caller has no role in', async () => {
        const answer = await w.call(w.globex, 'SendMessage', {
          tenant: 4711,
          message: wireMessageV1('tck-complete-task'),
        });
        expect([-32001, -32602]).toContain(answer.json.error?.code);
        expect(await w.ok(w.bootstrap, '_cleveragents/namespace/delete', { namespace: '4711' })).toEqual({
          namespace: '4711',
          deleted: true,
        });
      });

      // A v0.3 TaskNotFound carries the same A2A ErrorInfo as a v1.0 one.
      it('v0.3 about an acme task with a stray tenant: the answer a missing task gets', async () => {
        const real = await w.sharedTask(w.acme.member, 'completed');
        const missing = `missing-${randomUUID()}`;
        const hidden = await w.call(w.globex, 'tasks/get', { tenant: 'acme', id: real.id });
        const none = await w.call(w.globex, 'tasks/get', { id: missing });
        expectTaskNotFound(hidden);
        expect(visible(hidden, real.id)).toBe(visible(none, missing));
      });
    });
  });
});
