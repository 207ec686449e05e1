import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { rawCall, readSse, startServer, type TestServer } from '../support/server.js';
import { StdioClient } from '../support/stdio-client.js';
import { ifAssigned } from '../support/assigned.js';

/** One step of the scenario list: a JSON-RPC line (or raw text), a stream or not. */
interface Step {
  name: string;
  stream?: boolean;
  /** Raw text sent as is (for malformed input); its answer has id null. */
  raw?: string;
  body?: (results: Record<string, any>) => Record<string, unknown> & { id: unknown };
}

const message = (messageId: string, text = 'parity') => ({ messageId, role: 'ROLE_USER', parts: [{ text }] });

const SCENARIO: Step[] = [
  { name: 'health', body: () => ({ jsonrpc: '2.0', id: 1, method: '_cleveragents/diagnostics/health' }) },
  { name: 'info', body: () => ({ jsonrpc: '2.0', id: 2, method: '_cleveragents/diagnostics/info' }) },
  {
    name: 'send',
    body: () => ({
      jsonrpc: '2.0',
      id: 3,
      method: 'SendMessage',
      params: { message: message('tck-complete-task-p1') },
    }),
  },
  {
    name: 'sendLegacy',
    body: () => ({
      jsonrpc: '2.0',
      id: 4,
      method: 'message/send',
      params: {
        message: {
          kind: 'message',
          messageId: 'tck-artifact-data-p2',
          role: 'user',
          parts: [{ kind: 'text', text: 'x' }],
        },
      },
    }),
  },
  { name: 'get', body: (r) => ({ jsonrpc: '2.0', id: 5, method: 'GetTask', params: { id: r.send.result.task.id } }) },
  {
    name: 'list',
    body: (r) => ({ jsonrpc: '2.0', id: 6, method: 'ListTasks', params: { contextId: r.send.result.task.contextId } }),
  },
  {
    name: 'aliasList',
    body: (r) => ({ jsonrpc: '2.0', id: 7, method: 'tasks/list', params: { contextId: r.send.result.task.contextId } }),
  },
  {
    name: 'stream',
    stream: true,
    body: () => ({
      jsonrpc: '2.0',
      id: 'stream-1',
      method: 'SendStreamingMessage',
      params: { message: message('tck-stream-001-p3') },
    }),
  },
  {
    name: 'waitingTask',
    body: () => ({
      jsonrpc: '2.0',
      id: 8,
      method: 'SendMessage',
      params: { message: message('tck-input-required-p4') },
    }),
  },
  {
    name: 'cancel',
    body: (r) => ({ jsonrpc: '2.0', id: 9, method: 'CancelTask', params: { id: r.waitingTask.result.task.id } }),
  },
  {
    name: 'notCancelable',
    body: (r) => ({ jsonrpc: '2.0', id: 10, method: 'CancelTask', params: { id: r.send.result.task.id } }),
  },
  { name: 'missingTask', body: () => ({ jsonrpc: '2.0', id: 11, method: 'GetTask', params: { id: 'no-such-task' } }) },
  { name: 'unknownExtension', body: () => ({ jsonrpc: '2.0', id: 12, method: '_cleveragents/none/such' }) },
  {
    name: 'badParams',
    body: () => ({ jsonrpc: '2.0', id: 13, method: '_cleveragents/diagnostics/info', params: { bogus: 1 } }),
  },
  { name: 'unknownStandard', body: () => ({ jsonrpc: '2.0', id: 14, method: 'tasks/frobnicate', params: {} }) },
  { name: 'badEnvelope', body: () => ({ jsonrpc: '1.0', id: 15, method: 'GetTask' }) },
  { name: 'parseError', raw: '{"jsonrpc":"2.0","id":16,' },
  {
    name: 'namespaceCreate',
    body: () => ({
      jsonrpc: '2.0',
      id: 19,
      method: '_cleveragents/namespace/create',
      params: { namespace: 'parity-team', displayName: 'Parity' },
    }),
  },
  {
    name: 'namespaceDuplicate',
    body: () => ({
      jsonrpc: '2.0',
      id: 20,
      method: '_cleveragents/namespace/create',
      params: { namespace: 'parity-team' },
    }),
  },
  { name: 'namespaceList', body: () => ({ jsonrpc: '2.0', id: 21, method: '_cleveragents/namespace/list' }) },
  {
    name: 'sendInNamespace',
    body: () => ({
      jsonrpc: '2.0',
      id: 22,
      method: 'SendMessage',
      params: { tenant: 'parity-team', message: message('tck-complete-task-p3') },
    }),
  },
  {
    name: 'auditList',
    body: () => ({ jsonrpc: '2.0', id: 23, method: '_cleveragents/audit/list', params: { namespace: 'parity-team' } }),
  },
  {
    name: 'registryCreate',
    body: () => ({
      jsonrpc: '2.0',
      id: 24,
      method: '_cleveragents/registry/create',
      params: {
        namespace: 'parity-team',
        kind: 'actor',
        name: 'parity-actor',
        spec: { localGraph: 'orchestrator', model: { model: 'm', temperature: 0.2 }, profile: 'manual' },
        labels: { team: 'parity' },
      },
    }),
  },
  {
    name: 'registryBadSpec',
    body: () => ({
      jsonrpc: '2.0',
      id: 25,
      method: '_cleveragents/registry/create',
      params: {
        namespace: 'parity-team',
        kind: 'actor',
        name: 'hot',
        spec: { graphId: 'g', model: { model: 'm', temperature: 7 } },
      },
    }),
  },
  {
    name: 'syncPull',
    body: () => ({
      jsonrpc: '2.0',
      id: 26,
      method: '_cleveragents/sync/pull',
      params: { namespace: 'parity-team', cursor: 3, limit: 10 },
    }),
  },
  { name: 'batch', raw: '[{"jsonrpc":"2.0","id":17,"method":"GetTask"}]' },
  { name: 'protoKey', raw: '{"jsonrpc":"2.0","id":18,"method":"GetTask","params":{"__proto__":{}}}' },
];

type Runner = { call(step: Step, results: Record<string, any>): Promise<any> };

async function runScenario(runner: Runner): Promise<Record<string, any>> {
  const results: Record<string, any> = {};
  for (const step of SCENARIO) results[step.name] = await runner.call(step, results);
  return results;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;

const ULID = /\b[0-9A-HJKMNP-TV-Z]{26}\b/g;
/** Who acts: anonymous over HTTP with `none`, the OS user on stdio (docs/protocol.md §2), named in audit rows. */
const PRINCIPALS = new Set(['anonymous', `local:${userInfo().username}`]);

/** Server-made ids and times, and the acting principal, differ between two runs; everything else must not. */
function normalise(results: Record<string, any>): unknown {
  const ids = new Map<string, string>();
  const text = JSON.stringify(results, (key, value) => {
    if (key === 'uptimeSeconds' || key === 'latencyMs') return 0;
    if (typeof value === 'string' && PRINCIPALS.has(value)) return '<principal>';
    if (key === 'nextPageToken' && typeof value === 'string' && value !== '') return '<token>';
    return value;
  })
    .replace(UUID, (id) => {
      if (!ids.has(id)) ids.set(id, `<id${ids.size}>`);
      return ids.get(id)!;
    })
    .replace(ISO, '<time>')
    .replace(ULID, '<ulid>')
    .replace(/correlation id [^)]+/g, 'correlation id <id>');
  return JSON.parse(text);
}

describe.each(databaseTargets())('transport parity: one scenario list over HTTP and stdio on $kind', (target) => {
  let httpDb: TestDatabase;
  let stdioDb: TestDatabase;
  let server: TestServer;
  let stdio: StdioClient;

  beforeAll(async () => {
    httpDb = await target.create();
    stdioDb = await target.create();
    server = await startServer(httpDb);
    // The same authentication configuration as the HTTP server (stdio itself takes no credentials).
    stdio = StdioClient.start({
      ...stdioDb.env,
      CLEVERAGENTS_MIGRATE_ON_START: 'true',
      CLEVERAGENTS_AUTH_SCHEMES: 'none',
    });
  });

  afterAll(async () => {
    ifAssigned(stdio)?.kill();
    await ifAssigned(server)?.close();
    await ifAssigned(httpDb)?.cleanup();
    await ifAssigned(stdioDb)?.cleanup();
  });

  it('answers every step identically, and stdout carries nothing but JSON-RPC', async () => {
    const overHttp = await runScenario({
      async call(step, results) {
        if (step.raw !== undefined) return (await rawCall(server.endpoint, step.raw)).json;
        const body = step.body!(results);
        if (!step.stream) return (await rawCall(server.endpoint, body)).json;
        const res = await fetch(server.endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return readSse(res);
      },
    });
    const overStdio = await runScenario({
      async call(step, results) {
        if (step.raw !== undefined) return stdio.sendLine(step.raw, null);
        const body = step.body!(results);
        return step.stream ? stdio.stream(body) : stdio.request(body);
      },
    });

    // Sanity: the scenario really exercised success, streaming and error paths.
    expect(overHttp.send.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(overHttp.stream.length).toBeGreaterThanOrEqual(4);
    expect(overHttp.missingTask.error.code).toBe(-32001);
    expect(overHttp.parseError.error.code).toBe(-32700);
    expect(overStdio.cancel.result.status.state).toBe('TASK_STATE_CANCELED');
    expect(overHttp.namespaceCreate.result.namespace).toBe('parity-team');
    expect(overHttp.namespaceDuplicate.error.code).toBe(-32005);
    expect(overStdio.sendInNamespace.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(overStdio.auditList.result.items.map((i: { action: string }) => i.action)).toEqual(['namespace.create']);
    expect(overHttp.registryCreate.result).toMatchObject({ kind: 'actor', name: 'parity-actor', revision: 1 });
    expect(overStdio.registryBadSpec.error.data[1].fieldViolations.map((v: { field: string }) => v.field)).toEqual([
      'spec.model.temperature',
    ]);
    expect(overStdio.syncPull.result.changes.map((c: { seq: number; name: string }) => [c.seq, c.name])).toEqual([
      [4, 'default'],
      [5, 'guarded'],
      [6, 'parity-actor'],
    ]);

    expect(normalise(overStdio)).toEqual(normalise(overHttp));

    for (const line of stdio.stdoutLines) expect(JSON.parse(line).jsonrpc).toBe('2.0');
    expect(stdio.stderr).toMatch(/"level":"info"/);
  });

  it('exits cleanly when the client closes stdin', async () => {
    const code = await stdio.end();
    expect(code).toBe(0);
  });
});
