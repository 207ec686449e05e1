import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../../packages/server/src/config/app.config.js';
import { openDatabase } from '../../packages/server/src/database/database.startup.js';
import type { ActorTurn, TurnResult } from '../../packages/server/src/execution/actor-turn.js';
import { LocalActorBackend } from '../../packages/server/src/execution/local/local.backend.js';
import {
  APPROVAL_REQUEST_TYPE,
  APPROVAL_RESPONSE_TYPE,
  CLIENT_RESPONSE_TYPE,
  UPDATE_PLAN_TOOL,
  type ApprovalRequest,
  type ApprovalResponse,
  type ClientCallResult,
  type ClientRequest,
  type OrchestratorSetup,
  type OrchestratorTool,
  type TurnPolicy,
} from '../../packages/server/src/execution/orchestrator/protocol.js';
import { aTurn, RecordingTurnOutput } from '../factories/actor-turns.js';
import { derivedContent, planEntries, writtenPath } from '../fixtures/orchestrator-scenario.mjs';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { ScenarioChatModel } from '../support/scripted-chat-models.js';
import { ENTITIES } from '../../packages/server/src/entities.js';
import { ifAssigned } from '../support/assigned.js';

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined };
const SCRIPTED_MODEL_ENV = {
  CLEVERAGENTS_MODEL_BASE_URL: 'http://127.0.0.1:9/v1',
  CLEVERAGENTS_MODEL: 'scripted-model',
};

const UPDATE_PLAN: OrchestratorTool = {
  name: UPDATE_PLAN_TOOL,
  description: 'Write or update the plan',
  inputSchema: { type: 'object', properties: { entries: { type: 'array' } }, required: ['entries'] },
  runsOn: 'server',
};
const READ: OrchestratorTool = {
  name: 'fs_read_text_file',
  description: "Read a text file on the user's machine",
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  runsOn: 'client',
  clientMethod: 'fs/read_text_file',
};
const WRITE: OrchestratorTool = {
  name: 'fs_write_text_file',
  description: "Write a text file on the user's machine",
  inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } },
  runsOn: 'client',
  clientMethod: 'fs/write_text_file',
};

function setupFor(policy: TurnPolicy, extra: Partial<OrchestratorSetup> = {}): OrchestratorSetup {
  return { policy, tools: [UPDATE_PLAN, READ, WRITE], ...extra };
}

const MANUAL: TurnPolicy = { gate: 'manual', allowedTools: [] };
const SUPERVISED: TurnPolicy = { gate: 'supervised', allowedTools: ['fs_read_text_file'] };
const AUTONOMOUS: TurnPolicy = { gate: 'autonomous', allowedTools: [] };

const READ_TEXT = 'hello orchestrator';
const FINAL = 'Done: read notes.txt, wrote notes.txt.upper.';

type Interrupt = ApprovalRequest | ClientRequest;

/** A short name of an interrupt: `approve:plan`, `approve:<tool>`, `client:<method>`. */
function nameOf(value: Interrupt): string {
  if (value.type === APPROVAL_REQUEST_TYPE) {
    return value.subject.kind === 'tool' ? `approve:${value.subject.tool}` : `approve:${value.subject.kind}`;
  }
  return `client:${value.requests.map((r) => r.method).join(',')}`;
}

/** The client: a file system in memory, answering client-requests; `fail` answers a method with an error. */
class FakeClient {
  readonly files = new Map<string, string>([['notes.txt', READ_TEXT]]);
  readonly requests: ClientRequest['requests'] = [];

  constructor(private readonly fail: Partial<Record<string, string>> = {}) {}

  answer(request: ClientRequest): ClientCallResult[] {
    return request.requests.map((call) => {
      this.requests.push(call);
      const failure = this.fail[call.method];
      if (failure) return { id: call.id, error: { code: -32002, message: failure } };
      const path = String(call.params.path);
      if (call.method === 'fs/read_text_file') return { id: call.id, result: { content: this.files.get(path) ?? '' } };
      this.files.set(path, String(call.params.content));
      return { id: call.id, result: {} };
    });
  }
}

type Decide = (request: ApprovalRequest) => Omit<ApprovalResponse, 'type' | 'requestId'>;
const approveAll: Decide = () => ({ decision: 'approve' });

/** A reply to a waiting task carrying one data part (an approval- or client-response). */
function replyTo(first: ActorTurn, value: Record<string, unknown>): ActorTurn {
  const turn = aTurn({
    contextId: first.contextId,
    taskId: first.taskId,
    mode: 'resume',
    output: first.output,
    text: '',
  });
  const message = { ...turn.input.message, parts: [] };
  return { ...turn, setup: first.setup, input: { text: '', data: [value], message } };
}

describe.each(databaseTargets())('the orchestrator graph on the local backend on $kind', (target) => {
  let database: TestDatabase;
  let config: AppConfig;
  let dataSource: DataSource;

  beforeAll(async () => {
    database = await target.create();
    config = database.config({ CLEVERAGENTS_MIGRATE_ON_START: 'true', ...SCRIPTED_MODEL_ENV });
    dataSource = await openDatabase(config, silent, { entities: ENTITIES });
  });
  afterAll(async () => {
    await ifAssigned(dataSource)?.destroy();
    await ifAssigned(database)?.cleanup();
  });

  /**
   * Runs a task to rest as a client would: approves (or as `decide` says) each approval request, runs
   * each client request on `client`. Returns the final result and the interrupts, in order.
   */
  async function drive(options: {
    setup: OrchestratorSetup;
    model: ScenarioChatModel;
    client?: FakeClient;
    decide?: Decide;
    text?: string;
    contextId?: string;
  }): Promise<{
    result: TurnResult;
    interrupts: Interrupt[];
    output: RecordingTurnOutput;
    client: FakeClient;
    first: ActorTurn;
  }> {
    const client = options.client ?? new FakeClient();
    const backend = new LocalActorBackend(dataSource, config, { modelFor: () => options.model });
    const output = new RecordingTurnOutput();
    const first = aTurn({
      text: options.text ?? 'Make an upper-case copy of notes.txt',
      setup: options.setup,
      output,
      contextId: options.contextId,
    });
    const interrupts: Interrupt[] = [];
    let result = await backend.run(first);
    while (result.state === 'input-required') {
      const value = result.value as Interrupt;
      interrupts.push(value);
      expect(interrupts.length).toBeLessThan(12);
      const response =
        value.type === APPROVAL_REQUEST_TYPE
          ? { type: APPROVAL_RESPONSE_TYPE, requestId: value.requestId, ...(options.decide ?? approveAll)(value) }
          : { type: CLIENT_RESPONSE_TYPE, responses: client.answer(value) };
      result = await backend.run(replyTo(first, response));
    }
    return { result, interrupts, output, client, first };
  }

  /** The reports of the task, without text and working events. */
  const reports = (output: RecordingTurnOutput) =>
    output.events.filter((event) => event !== 'working' && !event.startsWith('text:'));

  const HAPPY_REPORTS = [
    'plan',
    'tool-call:fs_read_text_file',
    'tool-result:fs_read_text_file',
    'tool-call:fs_write_text_file',
    'tool-result:fs_write_text_file',
    'plan',
  ];

  /**
   * What every completed happy run shows: plans (a gated plan shown before it is asked for, then once
   * approved), the client's read reaching the model, the derived write.
   */
  function expectHappyRun(run: Awaited<ReturnType<typeof drive>>, model: ScenarioChatModel, gated: boolean) {
    expect(run.result).toEqual({ state: 'completed', text: FINAL });
    expect(run.output.answer).toBe(FINAL);
    expect(reports(run.output)).toEqual(gated ? ['plan', ...HAPPY_REPORTS] : HAPPY_REPORTS);
    const planned = gated ? [planEntries('notes.txt'), planEntries('notes.txt')] : [planEntries('notes.txt')];
    expect(run.output.plans).toEqual([...planned, planEntries('notes.txt', true)]);
    expect(run.output.toolCalls).toEqual([
      { id: 'call-2', name: 'fs_read_text_file', args: { path: 'notes.txt' } },
      {
        id: 'call-3',
        name: 'fs_write_text_file',
        args: { path: writtenPath('notes.txt'), content: derivedContent(READ_TEXT) },
      },
    ]);
    expect(run.output.toolResults).toEqual([
      { id: 'call-2', name: 'fs_read_text_file', result: { content: READ_TEXT } },
      { id: 'call-3', name: 'fs_write_text_file', result: {} },
    ]);
    expect(run.client.requests).toEqual([
      { id: 'call-2', method: 'fs/read_text_file', params: { path: 'notes.txt' } },
      {
        id: 'call-3',
        method: 'fs/write_text_file',
        params: { path: 'notes.txt.upper', content: derivedContent(READ_TEXT) },
      },
    ]);
    expect(run.client.files.get('notes.txt.upper')).toBe('HELLO ORCHESTRATOR (18 characters)');
    // The model: five calls, bound with the setup's tools, told to plan, and given the client's read.
    expect(model.calls).toHaveLength(5);
    expect(model.calls[0].tools).toEqual(['update_plan', 'fs_read_text_file', 'fs_write_text_file']);
    expect(model.calls[0].messages[0]).toMatchObject({
      role: 'system',
      content: expect.stringContaining('update_plan'),
    });
    expect(model.calls[2].messages.at(-1)).toEqual({
      role: 'tool',
      content: JSON.stringify({ content: READ_TEXT }),
      toolCallId: 'call-2',
      status: 'success',
    });
    expect(run.output.tokens).toBeGreaterThan(0);
  }

  it('manual: asks to approve the plan and every tool call, then runs each on the client', async () => {
    const model = new ScenarioChatModel();
    const run = await drive({ setup: setupFor(MANUAL), model });

    expect(run.interrupts.map(nameOf)).toEqual([
      'approve:plan',
      'approve:fs_read_text_file',
      'client:fs/read_text_file',
      'approve:fs_write_text_file',
      'client:fs/write_text_file',
    ]);
    expect(run.interrupts[0]).toEqual({
      type: APPROVAL_REQUEST_TYPE,
      requestId: 'approve-call-1',
      subject: { kind: 'plan', entries: planEntries('notes.txt') },
      options: ['approve', 'reject', 'edit'],
    });
    expect(run.interrupts[1]).toEqual({
      type: APPROVAL_REQUEST_TYPE,
      requestId: 'approve-call-2',
      subject: {
        kind: 'tool',
        toolCallId: 'call-2',
        tool: 'fs_read_text_file',
        method: 'fs/read_text_file',
        args: { path: 'notes.txt' },
      },
      options: ['approve', 'reject', 'edit'],
    });
    expectHappyRun(run, model, true);
  });

  it('supervised: asks to approve the plan and the write, and reads without asking', async () => {
    const model = new ScenarioChatModel();
    const run = await drive({ setup: setupFor(SUPERVISED), model });

    expect(run.interrupts.map(nameOf)).toEqual([
      'approve:plan',
      'client:fs/read_text_file',
      'approve:fs_write_text_file',
      'client:fs/write_text_file',
    ]);
    expectHappyRun(run, model, true);
  });

  it('autonomous: asks nothing, runs the client tools, reports the usage the model reports', async () => {
    const model = new ScenarioChatModel({ tokensPerCall: 100 });
    const run = await drive({ setup: setupFor(AUTONOMOUS), model });

    expect(run.interrupts.map(nameOf)).toEqual(['client:fs/read_text_file', 'client:fs/write_text_file']);
    expectHappyRun(run, model, false);
    expect(run.output.tokens).toBe(500);
  });

  it('answers that all carry the same id (as some endpoints send) are each kept, none overwritten', async () => {
    const model = new ScenarioChatModel({ messageId: 'chatcmpl-same' });
    const run = await drive({ setup: setupFor(AUTONOMOUS), model });
    expectHappyRun(run, model, false);
    // Every model call saw the whole exchange so far: the fifth, four answers and four tool results.
    expect(model.calls[4].messages.filter((m) => m.role === 'assistant')).toHaveLength(4);
  });

  it('a rejected plan ends the task rejected, nothing runs; the session goes on with a new task', async () => {
    const model = new ScenarioChatModel();
    const run = await drive({ setup: setupFor(MANUAL), model, decide: () => ({ decision: 'reject' }) });

    expect(run.result).toEqual({ state: 'rejected', reason: 'The client rejected the plan' });
    expect(run.interrupts.map(nameOf)).toEqual(['approve:plan']);
    // Shown when it was asked for; nothing after the rejection.
    expect(reports(run.output)).toEqual(['plan']);
    expect(run.client.requests).toEqual([]);
    expect(model.calls).toHaveLength(1);

    // A new task of the session is not rejected by the last one, and plans under its own gate.
    const next = new ScenarioChatModel();
    const again = await drive({ setup: setupFor(AUTONOMOUS), model: next, contextId: run.first.contextId });
    expect(again.result).toEqual({ state: 'completed', text: FINAL });
    expect(again.interrupts.map(nameOf)).toEqual(['client:fs/read_text_file', 'client:fs/write_text_file']);
    // It saw the rejected exchange whole: the plan call, and its result.
    expect(next.calls[0].messages.slice(1, 4)).toEqual([
      { role: 'user', content: 'Make an upper-case copy of notes.txt' },
      expect.objectContaining({ role: 'assistant', toolCalls: [expect.objectContaining({ name: 'update_plan' })] }),
      expect.objectContaining({ role: 'tool', toolCallId: 'call-1', status: 'error' }),
    ]);
  });

  it('an edited plan is the plan that is reported and carried out', async () => {
    const edited = [{ content: 'Only read notes.txt', priority: 'high', status: 'pending' }];
    const model = new ScenarioChatModel();
    const run = await drive({
      setup: setupFor(SUPERVISED),
      model,
      decide: (request) => (request.subject.kind === 'plan' ? { decision: 'edit', edited } : { decision: 'approve' }),
    });
    expect(run.result).toEqual({ state: 'completed', text: FINAL });
    // Shown as the model wrote it when asked for, then as edited: the plan carried out.
    expect(run.output.plans.slice(0, 2)).toEqual([planEntries('notes.txt'), edited]);
  });

  it('a rejected tool call: the model is told, nothing runs on the client, the task completes', async () => {
    const model = new ScenarioChatModel();
    const run = await drive({
      setup: setupFor(MANUAL),
      model,
      decide: (request) => ({ decision: request.subject.kind === 'tool' ? 'reject' : 'approve' }),
    });

    expect(run.interrupts.map(nameOf)).toEqual(['approve:plan', 'approve:fs_read_text_file']);
    expect(run.result).toEqual({
      state: 'completed',
      text: 'I could not read notes.txt: Error: The call was rejected by the user',
    });
    expect(reports(run.output)).toEqual(['plan', 'plan', 'tool-result:fs_read_text_file']);
    expect(run.output.toolResults).toEqual([
      {
        id: 'call-2',
        name: 'fs_read_text_file',
        error: { message: 'The call was rejected by the user' },
        notRun: { args: { path: 'notes.txt' } },
      },
    ]);
    expect(run.client.requests).toEqual([]);
    expect(model.calls[2].messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'call-2', status: 'error' });
  });

  it('edited tool arguments are the ones the client runs', async () => {
    const model = new ScenarioChatModel();
    const run = await drive({
      setup: setupFor(SUPERVISED),
      model,
      decide: (request) =>
        request.subject.kind === 'tool'
          ? { decision: 'edit', edited: { path: 'elsewhere.txt', content: 'edited by the user' } }
          : { decision: 'approve' },
    });

    expect(run.result.state).toBe('completed');
    expect(run.client.requests[1]).toEqual({
      id: 'call-3',
      method: 'fs/write_text_file',
      params: { path: 'elsewhere.txt', content: 'edited by the user' },
    });
    expect(run.output.toolCalls[1].args).toEqual({ path: 'elsewhere.txt', content: 'edited by the user' });
    expect(run.client.files.get('elsewhere.txt')).toBe('edited by the user');
    expect(run.client.files.has('notes.txt.upper')).toBe(false);
  });

  it("a client's error reaches the model, which answers with it", async () => {
    const model = new ScenarioChatModel();
    const client = new FakeClient({ 'fs/read_text_file': 'No such file' });
    const run = await drive({ setup: setupFor(AUTONOMOUS), model, client });

    expect(run.result).toEqual({
      state: 'completed',
      text: 'I could not read notes.txt: Error: The client failed: No such file (code -32002)',
    });
    expect(run.output.toolResults).toEqual([
      { id: 'call-2', name: 'fs_read_text_file', error: { code: -32002, message: 'The client failed: No such file' } },
    ]);
    expect(model.calls[2].messages.at(-1)).toMatchObject({
      role: 'tool',
      status: 'error',
      content: expect.stringContaining('No such file'),
    });
  });

  it('a tool the client did not declare is not run: the model is told, no client-request is made', async () => {
    const model = new ScenarioChatModel();
    const run = await drive({ setup: { policy: AUTONOMOUS, tools: [UPDATE_PLAN] }, model });

    expect(run.interrupts).toEqual([]);
    expect(model.calls[0].tools).toEqual(['update_plan']);
    expect(run.result).toEqual({
      state: 'completed',
      text: 'I could not read notes.txt: Error: The tool fs_read_text_file is not offered here; use only the tools given',
    });
    expect(reports(run.output)).toEqual(['plan', 'tool-result:fs_read_text_file']);
    expect(run.output.toolResults).toEqual([
      {
        id: 'call-2',
        name: 'fs_read_text_file',
        error: { message: 'The tool fs_read_text_file is not offered here; use only the tools given' },
        notRun: { args: { path: 'notes.txt' } },
      },
    ]);
    expect(run.client.requests).toEqual([]);
  });

  it('executing an approved plan: no plan gate, the plan is in the prompt, tools still gated', async () => {
    const model = new ScenarioChatModel();
    const plan = { planId: 'plan-1', goal: 'Upper-case notes', entries: planEntries('notes.txt'), approved: true };
    const run = await drive({ setup: setupFor(MANUAL, { plan }), model });

    expect(run.interrupts.map(nameOf)).toEqual([
      'approve:fs_read_text_file',
      'client:fs/read_text_file',
      'approve:fs_write_text_file',
      'client:fs/write_text_file',
    ]);
    expect(model.calls[0].messages[0].content).toContain('You are executing the plan "Upper-case notes"');
    expectHappyRun(run, model, false);
  });

  it('an invalid plan is refused to the model without asking the client', async () => {
    const model = new ScenarioChatModel({
      reply: (messages) =>
        messages.at(-1)?.role === 'tool'
          ? { content: `Noted: ${messages.at(-1)?.content}`, toolCalls: [] }
          : { content: '', toolCalls: [{ id: 'bad-1', name: 'update_plan', args: { entries: [{ content: '' }] } }] },
    });
    const run = await drive({ setup: setupFor(MANUAL), model });

    expect(run.interrupts).toEqual([]);
    expect(run.output.plans).toEqual([]);
    expect(run.result).toEqual({
      state: 'completed',
      text: expect.stringMatching(/^Noted: Error: invalid plan: entry 0: content must be a non-empty string/),
    });
  });
});
