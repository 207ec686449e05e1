import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { METHOD_ALIASES, V03_METHODS, V1_METHODS } from '../../packages/server/src/a2a/protocol-version.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { parseJsonOrUndefined, startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * Property-based fuzzing of the JSON-RPC endpoint: seeded and bounded, every standard method in both
 * protocol versions and its aliases, and every `_cleveragents` method the card lists, with random and
 * adversarial params (lone surrogates, huge strings, wrong types, prototype keys). Whatever comes in,
 * the answer is JSON-RPC below HTTP 500, the server keeps serving, and its memory settles after a GC.
 */

const SEED = 20261201;
const RUNS = 2400;
const CHUNK = 100;

/** Field names the methods read, so that random params often reach past the first shape check. */
const FIELDS = [
  'id',
  'taskId',
  'contextId',
  'messageId',
  'message',
  'parts',
  'text',
  'kind',
  'role',
  'metadata',
  'configuration',
  'pushNotificationConfig',
  'url',
  'token',
  'authentication',
  'credentials',
  'historyLength',
  'pageSize',
  'pageToken',
  'tenant',
  'name',
  'namespace',
  'spec',
  'planId',
  'sessionId',
  'actor',
  'entries',
  'goal',
  'cursor',
  'changes',
  'expectedRevision',
  'status',
  '__proto__',
  'constructor',
  'prototype',
];

const LONE_SURROGATES = ['\ud800', 'a\udfffb', '\udc00\ud800'];

function adversarialString(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.constantFrom(...LONE_SURROGATES, '', ' ', '\r\nX-Injected: 1', '../../etc/passwd', '%00', 'null'),
    fc.constantFrom('http://169.254.169.254/latest', 'http://[::1]:5432/', 'javascript:alert(1)', 'https://x.test/a'),
    fc.integer({ min: 1, max: 300 }).map((kb) => 'x'.repeat(kb * 1024)),
    fc.string({ unit: 'binary', maxLength: 20 }),
  );
}

function adversarialValue(): fc.Arbitrary<unknown> {
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      adversarialString(),
      fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.constantFrom(-1, 0, 2 ** 53, 1e308, -1e308)),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(fc.constantFrom(...FIELDS), tie('value'), { maxKeys: 5 }),
    ),
  }));
  return value;
}

/** Params: random JSON, or objects keyed by the fields the methods read, holding adversarial values. */
function params(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.dictionary(fc.constantFrom(...FIELDS), adversarialValue(), { maxKeys: 6 }),
    fc.record({
      message: fc.record(
        {
          messageId: adversarialString(),
          role: fc.constantFrom('ROLE_USER', 'user', 'agent', 7),
          parts: fc.array(fc.dictionary(fc.constantFrom('text', 'kind', 'data', 'file'), adversarialValue())),
          kind: fc.constantFrom('message', 'task'),
          contextId: adversarialString(),
          metadata: adversarialValue(),
        },
        { requiredKeys: [] },
      ),
    }),
  );
}

type Json = Record<string, unknown>;

/** Well-formed params of the methods that store what they are given, to be mutated at one place. */
function templates(taskId: string): fc.Arbitrary<[string, Json]> {
  const id = fc.uuid();
  const name = id.map((u) => `fz-${u.slice(0, 8)}`);
  const hook = {
    url: 'https://hooks.example.test/a',
    token: 't',
    authentication: { scheme: 'Bearer', credentials: 'c' },
  };
  return fc.oneof(
    id.map((m): [string, Json] => [
      'SendMessage',
      { message: { messageId: m, role: 'ROLE_USER', parts: [{ text: 'hi' }], metadata: {} } },
    ]),
    id.map((m): [string, Json] => [
      'message/send',
      { message: { kind: 'message', messageId: m, role: 'user', parts: [{ kind: 'text', text: 'hi' }] } },
    ]),
    id.map((m): [string, Json] => ['CreateTaskPushNotificationConfig', { taskId, id: m, ...hook }]),
    id.map((m): [string, Json] => [
      'tasks/pushNotificationConfig/set',
      { taskId, pushNotificationConfig: { id: m, ...hook } },
    ]),
    fc.constant<[string, Json]>(['GetTask', { id: taskId, historyLength: 2 }]),
    fc.constant<[string, Json]>(['tasks/get', { id: taskId, historyLength: 2 }]),
    fc.constant<[string, Json]>(['ListTasks', { pageSize: 10, contextId: 'c', includeArtifacts: true }]),
    fc.constant<[string, Json]>(['tasks/cancel', { id: taskId }]),
    name.map((n): [string, Json] => [
      '_cleveragents/registry/create',
      { kind: 'skill', name: n, spec: { description: 'd', instructions: 'i' } },
    ]),
    name.map((n): [string, Json] => [
      '_cleveragents/registry/create',
      { kind: 'actor', name: n, spec: { localGraph: 'orchestrator', systemPrompt: 's' } },
    ]),
    name.map((n): [string, Json] => ['_cleveragents/namespace/create', { name: n, description: 'd' }]),
    id.map((m): [string, Json] => ['_cleveragents/session/create', { title: m, metadata: { k: 'v' } }]),
    id.map((m): [string, Json] => ['_cleveragents/plan/create', { goal: m }]),
    fc.constant<[string, Json]>(['_cleveragents/sync/pull', { cursor: 0, limit: 10 }]),
  );
}

/** Every place in a JSON value where another value could stand. */
function placesIn(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [path];
  const keys: (string | number)[] = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return [path, ...keys.flatMap((key) => placesIn((value as any)[key], [...path, key]))];
}

function replaced(value: unknown, path: (string | number)[], by: unknown): unknown {
  if (path.length === 0) return by;
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as Json) };
  copy[path[0]] = replaced(copy[path[0]], path.slice(1), by);
  return copy;
}

/** The protocol version a method belongs to: v0.3's names have a slash, v1.0's do not. */
function versionOf(method: string): string {
  return method.includes('/') && !method.startsWith('_cleveragents/') ? '0.3' : '1.0';
}

/**
 * A well-formed request with one place holding an adversarial value: any place (the params themselves
 * included) with any value, or a string with another string, which keeps the shape and so reaches storage.
 */
function mutated(taskId: string): fc.Arbitrary<[unknown, string]> {
  const anyPlace = fc.tuple(templates(taskId), fc.nat(), adversarialValue()).map(([[method, params], at, by]) => {
    const places = placesIn(params);
    return [method, replaced(params, places[at % places.length], by)] as const;
  });
  const stringPlace = fc.tuple(templates(taskId), fc.nat(), adversarialString()).map(([[method, params], at, by]) => {
    const strings = placesIn(params).filter((path) => typeof path.reduce((v: any, k) => v[k], params) === 'string');
    const places = strings.length > 0 ? strings : placesIn(params);
    return [method, replaced(params, places[at % places.length], by)] as const;
  });
  return fc
    .tuple(fc.oneof(anyPlace, stringPlace), fc.nat())
    .map(([[method, params], id]) => [{ jsonrpc: '2.0', id, method, params }, versionOf(method)]);
}

function envelope(methods: string[]): fc.Arbitrary<unknown> {
  const method = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...methods) },
    { weight: 1, arbitrary: adversarialString() },
    { weight: 1, arbitrary: adversarialValue() },
  );
  const id = fc.oneof(fc.integer(), fc.string({ maxLength: 20 }), fc.constant(null), adversarialValue());
  return fc.oneof(
    { weight: 9, arbitrary: fc.record({ jsonrpc: fc.constant('2.0'), id, method, params: params() }) },
    { weight: 1, arbitrary: adversarialValue() },
  );
}

interface Answer {
  status: number;
  contentType: string;
  bodies: unknown[];
}

/**
 * Posts one request; an SSE answer is read until it ends or for at most two seconds (a stream may run on).
 * Any other answer is waited for (30 s at most: generous on a loaded machine).
 */
async function post(endpoint: string, apiKey: string, body: string, version: string): Promise<Answer> {
  const abort = new AbortController();
  let timer = setTimeout(() => abort.abort(), 30_000);
  try {
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'a2a-version': version },
      body,
      signal: abort.signal,
    });
    const contentType = res.headers.get('content-type') ?? '';
    if (contentType.includes('text/event-stream')) {
      clearTimeout(timer);
      timer = setTimeout(() => abort.abort(), 2000);
    }
    let text = '';
    try {
      text = await res.text();
    } catch {
      // The stream outlived its two seconds: what arrived before is not kept, the status still counts.
    }
    const bodies = contentType.includes('text/event-stream')
      ? text
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => parseJsonOrUndefined(line.slice(5)))
      : [parseJsonOrUndefined(text)];
    return { status: res.status, contentType, bodies };
  } finally {
    clearTimeout(timer);
  }
}

/** What is wrong with one JSON-RPC answer object (empty when it is one). */
function notJsonRpc(body: any): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return `not an object: ${String(body)}`;
  if (body.jsonrpc !== '2.0') return 'no jsonrpc 2.0';
  if ('result' in body === 'error' in body) return 'neither or both of result and error';
  if ('error' in body && !Number.isInteger(body.error?.code)) return 'an error without an integer code';
  return undefined;
}

function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const target = databaseTargets().at(-1)!;

describe(`fuzzing every method on ${target.kind}`, () => {
  let db: TestDatabase;
  let server: TestServer;
  let apiKey: string;
  let methods: string[];
  let taskId: string;
  const unexpected: unknown[] = [];
  const onUnexpected = (error: unknown): void => void unexpected.push(error);

  beforeAll(async () => {
    db = await target.create();
    ({ server, bootstrapKey: apiKey } = await startServerWithBootstrapKey(db, {
      CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
      CLEVERAGENTS_RATE_LIMIT_PER_MINUTE: '0',
    }));
    const card = await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json();
    const extension = (card.capabilities.extensions as any[]).find((e) => Array.isArray(e.params?.methods));
    methods = [...V1_METHODS, ...V03_METHODS, ...METHOD_ALIASES.keys(), ...(extension.params.methods as string[])];
    const sent = await post(
      server.endpoint,
      apiKey,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'fz-first', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      }),
      '1.0',
    );
    taskId = (sent.bodies[0] as any).result.task.id as string;
    process.on('uncaughtException', onUnexpected);
    process.on('unhandledRejection', onUnexpected);
  });

  afterAll(async () => {
    process.off('uncaughtException', onUnexpected);
    process.off('unhandledRejection', onUnexpected);
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('answers every request with JSON-RPC below HTTP 500, keeps serving and settles its memory', async () => {
    expect(methods.filter((m) => m.startsWith('_cleveragents/')).length).toBeGreaterThan(30);
    collectGarbage();
    const heapBefore = process.memoryUsage().heapUsed;
    const failures: string[] = [];
    const counts = { requests: 0, errors: 0, results: 0, streams: 0 };
    const byOutcome = new Map<string, number>();

    // Sampled in chunks so that no more than a chunk of large strings is held at once.
    for (let chunk = 0; chunk < RUNS / CHUNK; chunk++) {
      const random = fc.tuple(envelope(methods), fc.constantFrom('1.0', '0.3'));
      const requests = fc.sample(fc.oneof(random, mutated(taskId)), {
        seed: SEED + chunk,
        numRuns: CHUNK,
      });
      for (const [request, version] of requests) {
        const answer = await post(server.endpoint, apiKey, JSON.stringify(request), version);
        counts.requests += 1;
        if (answer.contentType.includes('text/event-stream')) counts.streams += 1;
        const problems = [
          answer.status >= 500 ? `HTTP ${answer.status}` : undefined,
          ...answer.bodies.map(notJsonRpc),
        ].filter((p): p is string => p !== undefined);
        for (const body of answer.bodies as any[]) {
          if (body?.error) counts.errors += 1;
          else counts.results += 1;
          const method = (request as any)?.method;
          const named = typeof method === 'string' && methods.includes(method) ? method : '(other)';
          const key = `${named} ${body?.error ? (body.error.data?.[0]?.reason ?? body.error.code) : 'ok'}`;
          byOutcome.set(key, (byOutcome.get(key) ?? 0) + 1);
        }
        if (problems.length > 0) {
          failures.push(`${JSON.stringify(request).slice(0, 300)} (v${version}): ${problems.join('; ')}`);
        }
      }
    }

    console.log(`fuzz: ${JSON.stringify(counts)}, ${failures.length} failing`);
    console.log(
      [...byOutcome]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 60)
        .map(([k, n]) => `${n} ${k}`)
        .join('\n'),
    );
    expect(failures.slice(0, 10)).toEqual([]);
    expect(counts.requests).toBe(RUNS);
    expect(counts.results).toBeGreaterThan(0);
    expect(unexpected).toEqual([]);

    const health = await fetch(server.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: '_cleveragents/diagnostics/health' }),
    });
    expect((await health.json()).result).toBeDefined();

    collectGarbage();
    const grownMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
    console.log(`fuzz: heap after GC ${grownMiB.toFixed(1)} MiB from its start`);
    expect(grownMiB).toBeLessThan(48);
  }, 420_000);
});
