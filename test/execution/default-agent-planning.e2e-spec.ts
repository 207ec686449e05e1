import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState } from '@a2a-js/sdk';
import { Client, ClientFactory } from '@a2a-js/sdk/client';
import { PLANNING_RULE } from '../../packages/server/src/execution/orchestrator/graph.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import {
  OpenAiCompatibleEndpoint,
  offeredToolNames,
  scenarioMessagesOf,
  scenarioReply,
  type EndpointAnswer,
} from '../support/openai-endpoint.js';
import { statusData, type Json } from '../support/orchestration.js';
import { rawCall, startServer, type TestServer } from '../support/server.js';
import { assembledAnswer, collect, stateOf } from '../support/streams.js';
import { sendRequest } from '../factories/messages.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The default actor on a model (docs/plans.md#when-the-orchestrator-plans): a simple request is answered
 * at once, with no plan and so no plan gate, even under the default `supervised` profile and from a
 * generic A2A client that could not answer an approval; work of several steps is planned, and the plan
 * waits for approval.
 *
 * The model is scripted to do what its system prompt tells it, as an instruction-following model
 * would: a request of several steps ("Uppercase <file>") plays the orchestrator scenario (a plan first);
 * a simple one is answered directly when the prompt says simple requests need no plan, and otherwise
 * planned (what a prompt that says "first make a plan" got from a real model).
 */

const SIMPLE = 'Say hello';
const HELLO = 'Hello! How can I help?';
const SEVERAL_STEPS = 'Uppercase /work/notes.txt';

function followsItsPrompt(body: Record<string, unknown>): EndpointAnswer {
  const messages = scenarioMessagesOf(body);
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n');
  const request = messages.findLast((m) => m.role === 'user')?.content ?? '';
  const simple = !request.startsWith('Uppercase');
  if (simple && system.includes(PLANNING_RULE)) return { tokens: HELLO.match(/\S+\s*/g) ?? [] };
  return scenarioReply()(body);
}

describe.each(databaseTargets())('the default actor plans only work of several steps, on $kind', (target) => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let client: Client;
  const rpc = async (method: string, params: Record<string, unknown>) =>
    (await rawCall(server.endpoint, { jsonrpc: '2.0', id: 1, method, params })).json;

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start(followsItsPrompt);
    db = await target.create();
    server = await startServer(db, {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'llama-3.1-8b-instruct',
    });
    client = await new ClientFactory().createFromUrl(server.baseUrl);
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  it('a simple request under the default supervised profile: answered directly, no plan, no gate', async () => {
    const sent = model.requests.length;
    const events = await collect(client.sendMessageStream(sendRequest('hello-1', { text: SIMPLE })));

    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(assembledAnswer(events)).toBe(HELLO);
    expect(events.some((e) => stateOf(e) === TaskState.TASK_STATE_INPUT_REQUIRED)).toBe(false);

    // One model call, told the rule, with update_plan offered (a generic client declares no tools of its own).
    expect(model.requests.length).toBe(sent + 1);
    const body = model.requests[sent].body;
    const system = scenarioMessagesOf(body).find((m) => m.role === 'system')?.content ?? '';
    expect(system).toContain(PLANNING_RULE);
    expect(offeredToolNames(body)).toEqual(['update_plan']);

    // The session holds no plan.
    const task = events[0].payload?.$case === 'task' ? events[0].payload.value : undefined;
    expect(task).toBeDefined();
    const plans = await rpc('_cleveragents/plan/list', { sessionId: task?.contextId });
    expect(plans.error).toBeUndefined();
    expect(plans.result.items).toEqual([]);
  }, 60000);

  it('work of several steps under the same profile: planned first, and the plan waits for approval', async () => {
    const events = await collect(client.sendMessageStream(sendRequest('upper-1', { text: SEVERAL_STEPS })));

    const last = events.at(-1);
    expect(stateOf(last)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const request = statusData(last).find((d: Json) => d.type === 'cleveragents/approval-request');
    expect(request?.subject?.kind).toBe('plan');
    expect((request?.subject?.entries as Json[]).map((e) => e.content)).toEqual([
      'Read /work/notes.txt',
      'Write /work/notes.txt.upper',
      'Report what was done',
    ]);

    const task = events[0].payload?.$case === 'task' ? events[0].payload.value : undefined;
    const plans = await rpc('_cleveragents/plan/list', { sessionId: task?.contextId });
    expect(plans.result.items.map((p: Json) => [p.goal, p.status])).toEqual([[SEVERAL_STEPS, 'draft']]);
  }, 60000);
});
