import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState } from '@a2a-js/sdk';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { freePort, startServer, startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { sendRequest } from '../factories/messages.js';
import { assembledAnswer } from '../support/streams.js';
import {
  CleverAgentsError,
  ExtensionNotOfferedError,
  StreamResumeError,
  UnreachableError,
  connect,
  type CleverAgentsClient,
} from '../../packages/client/src/node.js';
import { EXTENSION_URI, RPC_CODES } from '../../packages/contract/src/index.js';
import { startBareAgent, type BareAgent } from '../support/bare-agent.js';
import { collect, shapes, startCuttingProxy, type CuttingProxy } from './lib-support.js';
import { ifAssigned } from '../support/assigned.js';

/** No event twice: the same shape may repeat only when the events differ. */
function expectNoDuplicates(events: readonly unknown[]): void {
  const seen = new Set<string>();
  for (const e of events) {
    const key = JSON.stringify(e, (_k, v: unknown) => (v instanceof Uint8Array ? [...v] : v));
    expect(seen.has(key)).toBe(false);
    seen.add(key);
  }
}

describe('the client library over HTTP', () => {
  let db: TestDatabase;
  let server: TestServer;
  let client: CleverAgentsClient;

  beforeAll(async () => {
    db = await createEmbeddedTestDatabase();
    server = await startServer(db);
    client = await connect({ server: server.baseUrl });
  });

  afterAll(async () => {
    await ifAssigned(client)?.close();
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('reads the card and sees the CleverAgents extension', () => {
    expect(client.transport).toBe('http');
    expect(client.card.name).toBe('CleverAgents Server');
    expect(client.serverCard).toBe(client.card);
    expect(client.offersExtensions).toBe(true);
    expect(client.card.capabilities?.extensions.map((e) => e.uri)).toContain(EXTENSION_URI);
  });

  it('streams a message to completion, each event once', async () => {
    const events = await collect(client.stream(sendRequest('tck-stream-001')));
    expect(shapes(events)).toEqual([
      'task:TASK_STATE_SUBMITTED',
      'status:TASK_STATE_WORKING',
      'artifact:set',
      'status:TASK_STATE_COMPLETED',
    ]);
    expectNoDuplicates(events);
  });

  it("streams a message answering a waiting task past the snapshot it opens with, to the task's rest", async () => {
    const first = await collect(client.stream(sendRequest('tck-input-required-001')));
    expect(shapes(first).at(-1)).toBe('status:TASK_STATE_INPUT_REQUIRED');
    const task = first[0].payload!;
    if (task.$case !== 'task') throw new Error('the stream did not open with the task');
    const { id: taskId, contextId } = task.value;
    const answer = await collect(client.stream(sendRequest('client-follow-up-1', { text: 'more', taskId, contextId })));
    expect(shapes(answer).at(-1)).toBe('status:TASK_STATE_COMPLETED');
  });

  it('sends a message and reads the task back', async () => {
    const result = await client.send(sendRequest('tck-complete-task'));
    expect('id' in result && 'status' in result).toBe(true);
    const task = await client.tasks.get({ id: (result as { id: string }).id });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('creates a session and reads it back through the extension', async () => {
    const made = await client.sessions.create({ title: 'from the library' });
    expect(made.sessionId).toEqual(expect.any(String));
    const got = await client.sessions.get({ sessionId: made.sessionId });
    expect(got).toEqual(made);
    expect(await client.diagnostics.health()).toEqual(expect.any(Object));
  });

  it('maps -32602 with its reason and the field it names', async () => {
    const err = await client.sessions.create({ actor: 'nobody' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CleverAgentsError);
    const e = err as CleverAgentsError;
    expect(e.code).toBe(RPC_CODES.INVALID_PARAMS);
    expect(e.reason).toEqual(expect.any(String));
    expect(e.fieldViolations.map((v) => v.field)).toContain('actor');
    expect(e.method).toBe('_cleveragents/session/create');
    expect(e.hint).toContain('actor');
    expect(e.describe()).toContain('actor');
  });

  it('maps an SDK-side JSON-RPC error (GetTask of a missing task)', async () => {
    const err = await client.tasks.get({ id: 'no-such-task' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CleverAgentsError);
    expect((err as CleverAgentsError).reason).toBe('TASK_NOT_FOUND');
  });

  it('names the URL it cannot reach', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const err = await connect({ server: url }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnreachableError);
    expect((err as UnreachableError).message).toContain(url);
    expect((err as UnreachableError).message).toContain('connection refused');
  });

  describe('against a bare @a2a-js/sdk agent', () => {
    let agent: BareAgent;

    beforeAll(async () => {
      agent = await startBareAgent();
    });

    afterAll(async () => {
      await ifAssigned(agent)?.close();
    });

    it('streams, but refuses extension calls without sending them', async () => {
      const bare = await connect({ agent: agent.url });
      try {
        expect(bare.offersExtensions).toBe(false);
        expect(bare.serverCard).toBeUndefined();
        const events = await collect(bare.stream(sendRequest('plain', { text: 'hi' })));
        expect(shapes(events)).toEqual([
          'task:TASK_STATE_SUBMITTED',
          'status:TASK_STATE_WORKING',
          'artifact:set',
          'status:TASK_STATE_COMPLETED',
        ]);
        const before = agent.methods.length;
        const err = await bare.sessions.create({}).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ExtensionNotOfferedError);
        expect((err as Error).message).toContain(
          'this agent does not offer CleverAgents extension methods (its card does not declare urn:cleveragents:extensions:v1)',
        );
        expect(agent.methods.length).toBe(before);
      } finally {
        await bare.close();
      }
    });

    it('with agent + server, talks to the agent and calls extensions on the server', async () => {
      const split = await connect({ agent: agent.url, server: server.baseUrl });
      try {
        expect(split.card.name).toBe('Bare SDK agent');
        expect(split.serverCard?.name).toBe('CleverAgents Server');
        expect(split.offersExtensions).toBe(true);
        const received = agent.received.length;
        const events = await collect(split.stream(sendRequest('split', { text: 'to the agent' })));
        expect(shapes(events).at(-1)).toBe('status:TASK_STATE_COMPLETED');
        expect(agent.received.length).toBe(received + 1);
        const before = agent.methods.length;
        const made = await split.sessions.create({ title: 'split' });
        expect((await split.sessions.get({ sessionId: made.sessionId })).sessionId).toBe(made.sessionId);
        expect(agent.methods.slice(before)).toEqual([]);
      } finally {
        await split.close();
      }
    });
  });
});

describe('the client library against a server that requires an API key', () => {
  let db: TestDatabase;
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    db = await createEmbeddedTestDatabase();
    ({ server, bootstrapKey: key } = await startServerWithBootstrapKey(db, {
      CLEVERAGENTS_AUTH_SCHEMES: 'apiKey,bearer',
    }));
  });

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('maps 401 with a hint naming the missing credential', async () => {
    const anonymous = await connect({ server: server.baseUrl });
    try {
      const err = await anonymous.whoami().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CleverAgentsError);
      const e = err as CleverAgentsError;
      expect(e.code).toBe(RPC_CODES.AUTHENTICATION_REQUIRED);
      expect(e.httpStatus).toBe(401);
      expect(e.hint).toContain('pass --api-key or set CLEVERAGENTS_API_KEY');
      // The conversation side maps it the same way.
      const streamErr = await collect(anonymous.stream(sendRequest('tck-stream-001'))).catch((x: unknown) => x);
      expect(streamErr).toBeInstanceOf(CleverAgentsError);
      expect((streamErr as CleverAgentsError).httpStatus).toBe(401);
    } finally {
      await anonymous.close();
    }
  });

  it('says the key was refused when one was sent', async () => {
    const wrong = await connect({ server: server.baseUrl, apiKey: 'ca_wrong' });
    try {
      const err = (await wrong.whoami().catch((e: unknown) => e)) as CleverAgentsError;
      expect(err.code).toBe(RPC_CODES.AUTHENTICATION_REQUIRED);
      expect(err.hint).toContain('did not accept the API key');
    } finally {
      await wrong.close();
    }
  });

  it('sends the key as X-API-Key (or as a bearer token)', async () => {
    for (const creds of [{ apiKey: key }, { bearerToken: key }]) {
      const authed = await connect({ server: server.baseUrl, ...creds });
      try {
        expect(await authed.whoami()).toEqual(expect.objectContaining({}));
        const events = await collect(authed.stream(sendRequest('tck-stream-001')));
        expect(shapes(events).at(-1)).toBe('status:TASK_STATE_COMPLETED');
      } finally {
        await authed.close();
      }
    }
  });
  it('after a 401 asks a bearer-token function again with the refused token, and sends the new one', async () => {
    const asked: (string | undefined)[] = [];
    let current = 'ca_expired';
    const renewing = await connect({
      server: server.baseUrl,
      bearerToken: (refused) => {
        asked.push(refused);
        if (refused === current) current = key;
        return current;
      },
    });
    const stuck: (string | undefined)[] = [];
    const refusing = await connect({
      server: server.baseUrl,
      bearerToken: (refused) => {
        stuck.push(refused);
        return 'ca_wrong';
      },
    });
    const failing = await connect({
      server: server.baseUrl,
      bearerToken: (refused) => {
        if (refused) throw new Error('the sign-in has ended');
        return 'ca_wrong';
      },
    });
    try {
      asked.length = 0;
      expect(await renewing.whoami()).toEqual(expect.objectContaining({ scheme: 'bearer' }));
      expect(asked).toEqual([undefined, 'ca_expired']);
      await renewing.whoami();
      expect(asked).toEqual([undefined, 'ca_expired', undefined]);

      // The same token again is the answer: the server's 401, after one renewal asked.
      stuck.length = 0;
      const err = (await refusing.whoami().catch((e: unknown) => e)) as CleverAgentsError;
      expect([err.code, err.httpStatus]).toEqual([RPC_CODES.AUTHENTICATION_REQUIRED, 401]);
      expect(stuck).toEqual([undefined, 'ca_wrong']);

      await expect(failing.whoami()).rejects.toThrow('the sign-in has ended');
    } finally {
      await renewing.close();
      await refusing.close();
      await failing.close();
    }
  });
});

describe('the client library against a rate-limited server', () => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    db = await createEmbeddedTestDatabase();
    server = await startServer(db, { CLEVERAGENTS_RATE_LIMIT_PER_MINUTE: '60', CLEVERAGENTS_RATE_LIMIT_BURST: '2' });
  });

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('maps 429 with Retry-After', async () => {
    const client = await connect({ server: server.baseUrl });
    try {
      let err: unknown;
      for (let i = 0; i < 10 && err === undefined; i++) {
        err = await client.diagnostics.info().then(
          () => undefined,
          (e: unknown) => e,
        );
      }
      expect(err).toBeInstanceOf(CleverAgentsError);
      const e = err as CleverAgentsError;
      expect(e.httpStatus).toBe(429);
      expect(e.code).toBe(RPC_CODES.RATE_LIMITED);
      expect(e.retryAfter).toBeGreaterThan(0);
      expect(e.hint).toMatch(/^rate limited: retry in \d+ s$/);
    } finally {
      await client.close();
    }
  });
});

describe('a dropped HTTP stream', () => {
  let db: TestDatabase;
  let server: TestServer;
  let proxy: CuttingProxy;

  beforeAll(async () => {
    db = await createEmbeddedTestDatabase();
    proxy = await startCuttingProxy();
    server = await startServer(db, { PUBLIC_URL: proxy.url });
    proxy.target = server.baseUrl;
  });

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(proxy)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it.each([1, 2])(
    'cut after %i event(s), is re-joined with SubscribeToTask: no event twice, ending in the terminal state',
    async (cutAfter) => {
      proxy.cuts = 0;
      proxy.cutAfter = cutAfter;
      proxy.methods.length = 0;
      const rejoins: number[] = [];
      const client = await connect({
        server: proxy.url,
        streamRetry: { baseDelayMs: 50, onRejoin: ({ attempt }) => rejoins.push(attempt) },
      });
      try {
        // The conformance backend holds `test-resubscribe-message-id` tasks in `working` for 4 s.
        const events = await collect(client.stream(sendRequest('test-resubscribe-message-id')));
        expect(proxy.cuts).toBe(1);
        expect(proxy.methods).toEqual(expect.arrayContaining(['SendStreamingMessage', 'SubscribeToTask']));
        expect(shapes(events)).toEqual([
          'task:TASK_STATE_SUBMITTED',
          'status:TASK_STATE_WORKING',
          'status:TASK_STATE_COMPLETED',
        ]);
        expectNoDuplicates(events);
        const taskIds = new Set(
          events.map((e) => {
            const p = e.payload!;
            return p.$case === 'task' ? p.value.id : p.$case === 'message' ? '' : p.value.taskId;
          }),
        );
        expect(taskIds.size).toBe(1);
      } finally {
        await client.close();
      }
      expect(rejoins).toEqual([1]);
    },
  );

  it('re-joined after the task finished: the missing artifact chunk and the final status, from the log', async () => {
    proxy.cuts = 0;
    proxy.cutAfter = 3; // task, working, the first chunk
    proxy.methods.length = 0;
    const client = await connect({ server: proxy.url, streamRetry: { baseDelayMs: 300 } });
    try {
      const events = await collect(client.stream(sendRequest('tck-stream-artifact-chunked')));
      expect(proxy.cuts).toBe(1);
      expect(proxy.methods).toEqual(expect.arrayContaining(['SendStreamingMessage', 'SubscribeToTask']));
      expect(shapes(events)).toEqual([
        'task:TASK_STATE_SUBMITTED',
        'status:TASK_STATE_WORKING',
        'artifact:append',
        'artifact:append',
        'status:TASK_STATE_COMPLETED',
      ]);
      expect(assembledAnswer(events)).toBe('chunk-1 chunk-2');
      // The task rested before the re-join: SubscribeToTask after the last event seen (the server declares
      // resumable streams) sends what was missed from the task's log; no GetTask is needed.
      expect(proxy.methods).toEqual(['SendStreamingMessage', 'SubscribeToTask']);
      expectNoDuplicates(events);
    } finally {
      await client.close();
    }
  });

  it('gives up with a clear error when the task cannot be re-joined', async () => {
    const client = await connect({ server: proxy.url, streamRetry: { baseDelayMs: 10, windowMs: 1000 } });
    try {
      proxy.cuts = 0;
      proxy.cutAfter = 1;
      const stream = client.stream(sendRequest('test-resubscribe-message-id'));
      const first = await stream.next();
      expect(first.done).toBe(false);
      // The server goes out of reach: the stream is cut and every re-join fails to connect.
      proxy.target = `http://127.0.0.1:${await freePort()}`;
      const err = await collect(stream).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StreamResumeError);
      expect((err as Error).message).toMatch(/could not be re-joined within 1 s/);
    } finally {
      proxy.target = server.baseUrl;
      await client.close();
    }
  });
});
