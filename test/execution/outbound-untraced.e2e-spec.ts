import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { trace } from '@opentelemetry/api';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { extensionCalls, startServer, type TestServer } from '../support/server.js';
import { startLangGraphServer, type LangGraphServer } from '../support/langgraph-server.js';
import { startRemoteAgent, type RemoteAgent } from '../support/a2a-remote-agent.js';
import { collect, stateOf } from '../support/streams.js';
import { sendRequest } from '../factories/messages.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * Tracing off, the default (no OTEL_* variable, no tracer provider registered in this process): no trace
 * context leaves the server, whatever a caller sent it. A turn on the real LangGraph server, a turn of an
 * external A2A agent and their push notifications, through the SDK client whose every call carries a
 * traceparent of its own.
 */

const AGENT_KEY = 'agent-key-0c4e8a2b6d';
const CALLER_TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe.each(databaseTargets())('no trace context leaves an untraced server, on $kind', (target) => {
  let langgraph: LangGraphServer;
  let agent: RemoteAgent;
  let hook: http.Server;
  const hooked: http.IncomingHttpHeaders[] = [];
  let db: TestDatabase;
  let server: TestServer;
  let client: Client;
  const calls = extensionCalls(() => server);

  beforeAll(async () => {
    langgraph = await startLangGraphServer({ recordTraceHeaders: true });
    agent = await startRemoteAgent(AGENT_KEY);
    hook = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        hooked.push(req.headers);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    db = await target.create();
    server = await startServer(db, {
      CLEVERAGENTS_ACTOR_BACKEND: 'langgraph',
      CLEVERAGENTS_LANGGRAPH_URL: langgraph.url,
      CLEVERAGENTS_MODEL_ALLOWED_HOSTS: `127.0.0.1:${agent.port}`,
      CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1',
    });
    // A caller that traces: each of its calls names its own trace.
    const fetchImpl: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('traceparent', CALLER_TRACEPARENT);
      headers.set('tracestate', 'caller=state');
      return fetch(input, { ...init, headers });
    };
    client = await new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] }).createFromUrl(
      server.baseUrl,
    );
    await calls.ok('registry/create', {
      namespace: 'default',
      kind: 'actor',
      name: 'remote',
      spec: { description: 'an external agent', a2a: { url: agent.url, auth: { credential: AGENT_KEY } } },
    });
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(langgraph)?.close();
    await ifAssigned(agent)?.close();
    const receiver = ifAssigned(hook);
    receiver?.closeAllConnections();
    if (receiver) await new Promise((resolve) => receiver.close(resolve));
  });

  it('sends no traceparent to the LangGraph server, the external agent or a webhook', async () => {
    expect(trace.getActiveSpan()).toBeUndefined();
    const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;

    const onGraph = await collect(
      client.sendMessageStream(sendRequest('lg', { text: 'hello', push: { url: hookUrl, token: 'tok-graph' } })),
    );
    expect(stateOf(onGraph.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);

    const { sessionId } = (await calls.ok('session/create', {
      namespace: 'default',
      actor: 'remote',
      profile: 'autonomous',
    })) as { sessionId: string };
    const onAgent = await collect(
      client.sendMessageStream(
        sendRequest('a2a', { text: 'hello', contextId: sessionId, push: { url: hookUrl, token: 'tok-agent' } }),
      ),
    );
    expect(stateOf(onAgent.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    await until(() => {
      const tokens = new Set(hooked.map((headers) => headers['x-a2a-notification-token']));
      return tokens.has('tok-graph') && tokens.has('tok-agent');
    }, 'the push notifications of both tasks');

    const langgraphRequests = await langgraph.tracedRequests();
    expect(langgraphRequests.length).toBeGreaterThan(0);
    expect(agent.traceHeaders.length).toBeGreaterThan(0);
    const outgoing = [
      ...langgraphRequests,
      ...agent.traceHeaders,
      ...hooked.map((headers) => ({
        traceparent: headers.traceparent ?? null,
        tracestate: headers.tracestate ?? null,
        baggage: headers.baggage ?? null,
      })),
    ];
    for (const headers of outgoing) {
      expect({ traceparent: headers.traceparent, tracestate: headers.tracestate, baggage: headers.baggage }).toEqual({
        traceparent: null,
        tracestate: null,
        baggage: null,
      });
    }
  });
});
