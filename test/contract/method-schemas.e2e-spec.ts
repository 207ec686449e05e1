import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { EXTENSION_METHOD_NAMES, EXTENSION_URI, RPC_CODES } from '../../packages/contract/src/index.js';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { fieldsOf, rawCall, startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The published JSON Schemas are true of the server: every `_cleveragents/*` method is called on a real
 * server (local backend, a model endpoint served here), its params checked against the published params
 * schema before sending and its real result against the published result schema; and params that
 * violate the schema are refused with -32602 naming the field.
 */

type Json = Record<string, any>;
type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  addFormatsModule) as unknown as FormatsPlugin;

interface Published {
  params: Json;
  result: Json;
}

/** A value of another JSON type than `schema` says (or, nullable, any of its branches), for a params violation. */
function wrongValueFor(schema: Json): unknown {
  const types = [schema.type, ...((schema.anyOf ?? []) as Json[]).map((branch) => branch.type)].flat();
  return types.includes('string') ? 42 : 'not-of-this-type';
}

describe('the published method schemas hold on a real server (embedded)', () => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let key: string;
  let bundle: { extension: string; methods: Record<string, Published> };
  const ajv = addFormats(new Ajv2020({ allErrors: true, strict: true }));
  const validators = new Map<string, { params: ValidateFunction; result: ValidateFunction }>();
  const called = new Set<string>();

  const send = (method: string, params: Json) =>
    rawCall(server.endpoint, { jsonrpc: '2.0', id: 1, method, params }, { 'x-api-key': key });

  /** Calls `method` with params the schema accepts; answers the result, which must match its schema. */
  async function call(name: string, params: Json = {}): Promise<any> {
    const method = `_cleveragents/${name}`;
    const schema = validators.get(method)!;
    expect({ method, paramsErrors: schema.params(params) ? [] : schema.params.errors }).toEqual({
      method,
      paramsErrors: [],
    });
    const { json } = await send(method, params);
    expect({ method, error: json.error }).toEqual({ method, error: undefined });
    expect({ method, resultErrors: schema.result(json.result) ? [] : schema.result.errors }).toEqual({
      method,
      resultErrors: [],
    });
    called.add(method);
    return json.result;
  }

  beforeAll(async () => {
    // Slow tokens: an executing plan stays executing long enough to be paused, resumed and canceled.
    model = await OpenAiCompatibleEndpoint.start({ tokens: ['Work', 'ing', '.'], delayMs: 1500 });
    db = await createEmbeddedTestDatabase();
    ({ server, bootstrapKey: key } = await startServerWithBootstrapKey(db, {
      CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'llama-3.1-8b-instruct',
      CLEVERAGENTS_MODEL_API_KEY: 'sk-test',
      CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1',
    }));
    const card = (await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json()) as Json;
    const extension = (card.capabilities.extensions as Json[]).find((e) => e.uri === EXTENSION_URI)!;
    const res = await fetch(extension.params.schemas as string);
    expect(res.status).toBe(200);
    bundle = (await res.json()) as typeof bundle;
    for (const [method, published] of Object.entries(bundle.methods)) {
      validators.set(method, { params: ajv.compile(published.params), result: ajv.compile(published.result) });
    }
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  it('the card names the bundle, which publishes every contract method and nothing else, without credentials', () => {
    expect(bundle.extension).toBe(EXTENSION_URI);
    expect(Object.keys(bundle.methods).sort()).toEqual([...EXTENSION_METHOD_NAMES].sort());
  });

  it('every method answers what its result schema says', async () => {
    await call('auth/whoami');
    await call('diagnostics/info');
    await call('diagnostics/health');

    await call('namespace/create', { namespace: 'schemas', description: 'for the schema test' });
    await call('namespace/get', { namespace: 'schemas' });
    await call('namespace/list', { pageSize: 10 });
    await call('namespace/update', { namespace: 'schemas', displayName: 'Schemas', expectedRevision: 1 });
    await call('namespace/members/set', { namespace: 'schemas', subject: 'oidc:reader', role: 'viewer' });
    await call('namespace/members/list', { namespace: 'schemas' });
    await call('namespace/members/remove', { namespace: 'schemas', subject: 'oidc:reader' });
    await call('namespace/delete', { namespace: 'schemas' });

    const created = await call('auth/apikey/create', { name: 'schema-check', role: 'viewer' });
    await call('auth/apikey/list', { includeRevoked: true });
    await call('auth/apikey/revoke', { id: created.id });

    const webhook = await call('approval/webhook/create', { url: 'http://127.0.0.1:9/schema-check' });
    await call('approval/webhook/list');
    await call('approval/webhook/delete', { id: webhook.id });

    const skill = { description: 'Checks schemas', instructions: 'Compare every answer with its schema.' };
    await call('registry/create', { kind: 'skill', name: 'schema-check', spec: skill, labels: { team: 'api' } });
    await call('registry/get', { kind: 'skill', name: 'schema-check' });
    await call('registry/list', { kind: 'skill', labels: { team: 'api' } });
    await call('registry/update', { kind: 'skill', name: 'schema-check', labels: {}, expectedRevision: 1 });
    await call('registry/delete', { kind: 'skill', name: 'schema-check' });

    await call('sync/status');
    const pushed = await call('sync/push', {
      changes: [
        { kind: 'skill', name: 'pushed-skill', op: 'upsert', spec: skill },
        { kind: 'skill', name: 'pushed-skill', op: 'upsert', baseRevision: 7, spec: skill },
      ],
    });
    expect(pushed.conflicts).toHaveLength(1);
    await call('sync/pull', { cursor: 0, limit: 50 });

    const session = await call('session/create', { title: 'schemas', budget: { tokens: 100000 } });
    await call('session/get', { sessionId: session.sessionId });
    await call('session/list', { status: 'open' });
    await call('session/history', { sessionId: session.sessionId });
    await call('session/update', { sessionId: session.sessionId, title: 'schemas, renamed' });
    await call('context/assemble', { sessionId: session.sessionId, maxTokens: 1000 });

    const plan = await call('plan/create', {
      sessionId: session.sessionId,
      goal: 'Check every schema',
      entries: [{ content: 'call each method', priority: 'high' }],
    });
    await call('plan/get', { planId: plan.planId });
    await call('plan/status', { planId: plan.planId });
    await call('plan/list', { status: 'draft' });
    await call('plan/update', { planId: plan.planId, goal: 'Check every schema, twice' });
    await call('plan/approve', { planId: plan.planId });
    await call('plan/execute', { planId: plan.planId, clientCapabilities: { fs: { read: true, write: false } } });
    await call('plan/pause', { planId: plan.planId });
    await call('plan/resume', { planId: plan.planId });
    await call('plan/cancel', { planId: plan.planId });
    await call('plan/delete', { planId: plan.planId });

    // A plan gate: the model writes a plan under the manual profile; the task waits for its approval.
    model.answerWith((body) =>
      (body.messages as Json[]).some((m) => m.role === 'tool')
        ? { tokens: ['Done', '.'] }
        : {
            toolCalls: [
              {
                id: 'plan-1',
                name: 'update_plan',
                arguments: JSON.stringify({
                  entries: [{ content: 'Check the approvals', priority: 'high', status: 'pending' }],
                }),
              },
            ],
          },
    );
    const gated = await call('session/create', { title: 'gated', profile: 'manual' });
    const asked = await rawCall(
      server.endpoint,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: { messageId: 'gate-1', role: 'ROLE_USER', contextId: gated.sessionId, parts: [{ text: 'go' }] },
        },
      },
      { 'x-api-key': key, 'A2A-Version': '1.0' },
    );
    expect(asked.json.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const [pending] = (await call('approval/list', { sessionId: gated.sessionId })).items;
    await call('approval/get', { approvalId: pending.approvalId });
    await call('approval/answer', { approvalId: pending.approvalId, decision: 'approve' });

    const idle = await call('session/create', {});
    await call('session/close', { sessionId: idle.sessionId });
    await call('namespace/usage', { namespace: 'default', since: '2026-01-01', includeChildren: true });

    await until(async () => {
      const answer = await send('_cleveragents/audit/list', { namespace: 'default', action: 'apikey.revoke' });
      return (answer.json.result?.items?.length ?? 0) > 0;
    }, 'the audit record of the revocation');
    await call('audit/list', { namespace: 'default', action: 'apikey.revoke' });

    expect([...EXTENSION_METHOD_NAMES].filter((m) => !called.has(m))).toEqual([]);
  }, 60000);

  it('params that violate a method’s schema are refused by the schema and by the server, with -32602 naming the field', async () => {
    for (const [method, published] of Object.entries(bundle.methods)) {
      const properties = Object.entries((published.params.properties ?? {}) as Record<string, Json>);
      const required = new Set<string>(published.params.required ?? []);
      const [field, schema] = properties.find(([name]) => required.has(name)) ??
        properties.find(([name]) => name !== 'namespace') ?? ['unexpected', undefined];
      const params = { [field]: schema ? wrongValueFor(schema) : true };

      expect({ method, field, schemaAccepts: validators.get(method)!.params(params) }).toEqual({
        method,
        field,
        schemaAccepts: false,
      });
      const answer = await send(method, params);
      expect({ method, code: answer.json.error?.code }).toEqual({ method, code: RPC_CODES.INVALID_PARAMS });
      expect({ method, fields: fieldsOf(answer) }).toEqual({ method, fields: expect.arrayContaining([field]) });
    }
  });

  it('the check bites: a result with a field its schema does not declare, or missing one, is refused', () => {
    const whoami = validators.get('_cleveragents/auth/whoami')!.result;
    const valid = {
      subject: 's',
      displayName: 'd',
      scheme: 'apiKey',
      defaultNamespace: 'default',
      defaultNamespaceRole: 'owner',
      grants: [{ namespace: 'default', role: 'owner' }],
    };
    expect(whoami(valid)).toBe(true);
    expect(whoami({ ...valid, secret: 'x' })).toBe(false);
    const { grants: _grants, ...withoutGrants } = valid;
    void _grants;
    expect(whoami(withoutGrants)).toBe(false);
  });
});
