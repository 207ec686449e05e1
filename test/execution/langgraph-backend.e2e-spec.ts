import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@langchain/langgraph-sdk';
import { AppConfig } from '../../packages/server/src/config/app.config.js';
import {
  TURN_PAUSED,
  type ActorDefinition,
  type ActorTurn,
  type TurnOutput,
} from '../../packages/server/src/execution/actor-turn.js';
import type {
  ApprovalRequest,
  ClientRequest,
  OrchestratorSetup,
  PlanEntry,
  ToolCallReport,
  ToolResultReport,
} from '../../packages/server/src/execution/orchestrator/protocol.js';
import { requestQuestion } from '../../packages/server/src/execution/orchestrator/report.js';
import { estimateTokens } from '../../packages/server/src/execution/turn-values.js';
import { LangGraphActorBackend } from '../../packages/server/src/execution/langgraph/langgraph.backend.js';
import { langGraphThreadId } from '../../packages/server/src/execution/langgraph/langgraph.mapping.js';
import { Message, wireMessageV1 } from '../factories/messages.js';
import { PLAIN_SETUP } from '../factories/actor-turns.js';
import { startLangGraphServer, type LangGraphServer } from '../support/langgraph-server.js';
import { until } from '../support/wait.js';
import { captureWarnings, correlationIdOf, withoutCorrelationId } from '../support/logged-warnings.js';
import { ifAssigned } from '../support/assigned.js';

/** The fixture graph's answers (test/fixtures/langgraph/graph.mjs). */
const QUESTION = 'What name should I use?';
const SLOW_ANSWER = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ') + '.';

/** A TurnOutput that records every call in order and what it was given; `remember` keeps the data in memory. */
class RecordingOutput implements TurnOutput {
  readonly calls: string[] = [];
  readonly tokens: string[] = [];
  readonly plans: PlanEntry[][] = [];
  readonly toolCalls: ToolCallReport[] = [];
  readonly toolResults: ToolResultReport[] = [];
  readonly usages: number[] = [];
  remembered: Record<string, unknown> = {};
  restarts = 0;

  get answer(): string {
    return this.tokens.join('');
  }

  working(): void {
    this.calls.push('working');
  }
  text(delta: string): void {
    this.calls.push('text');
    this.tokens.push(delta);
  }
  restartText(): void {
    this.calls.push('restartText');
    this.restarts += 1;
    this.tokens.length = 0;
  }
  artifact(): void {
    this.calls.push('artifact');
  }
  remember(data: Record<string, unknown>): Promise<void> {
    this.calls.push('remember');
    this.remembered = { ...this.remembered, ...data };
    return Promise.resolve();
  }
  plan(entries: PlanEntry[]): void {
    this.calls.push('plan');
    this.plans.push(entries);
  }
  toolCall(call: ToolCallReport): void {
    this.calls.push('toolCall');
    this.toolCalls.push(call);
  }
  toolResult(result: ToolResultReport): void {
    this.calls.push('toolResult');
    this.toolResults.push(result);
  }
  usage(tokens: number): void {
    this.calls.push('usage');
    this.usages.push(tokens);
  }

  /** The calls of the orchestrator protocol (and the answer's first token), in order. */
  get reports(): string[] {
    return this.calls
      .filter((call, i) => call !== 'text' || this.calls[i - 1] !== 'text')
      .filter((c) => c !== 'remember');
  }
}

const orchestrator: ActorDefinition = { name: 'default', localGraph: 'orchestrator', tools: [] };

function turnFor(
  text: string,
  options: Partial<Omit<ActorTurn, 'input'>> & { data?: Record<string, unknown>[] } = {},
): ActorTurn & { output: RecordingOutput } {
  const { data = [], ...rest } = options;
  return {
    taskId: randomUUID(),
    contextId: randomUUID(),
    namespace: 'acme',
    owner: 'ada',
    actor: orchestrator,
    mode: 'start',
    input: { text, data, message: Message.fromJSON(wireMessageV1('lg', text)) },
    setup: PLAIN_SETUP,
    remembered: {},
    signal: new AbortController().signal,
    ...rest,
    output: (rest.output as RecordingOutput | undefined) ?? new RecordingOutput(),
  };
}

function configFor(url: string, apiKey?: string): AppConfig {
  return AppConfig.fromEnv({
    CLEVERAGENTS_DATA_DIR: dataDir,
    CLEVERAGENTS_ACTOR_BACKEND: 'langgraph',
    CLEVERAGENTS_LANGGRAPH_URL: url,
    CLEVERAGENTS_LANGGRAPH_API_KEY: apiKey,
  });
}

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let dataDir: string;
let langgraph: LangGraphServer;
let client: Client;
let backend: LangGraphActorBackend;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'cleveragents-langgraph-backend-'));
  langgraph = await startLangGraphServer();
  client = new Client({ apiUrl: langgraph.url, apiKey: null });
  backend = new LangGraphActorBackend(configFor(langgraph.url));
  backend.start();
});

afterAll(async () => {
  ifAssigned(backend)?.stop();
  await ifAssigned(langgraph)?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('LangGraphActorBackend against a real LangGraph API server', () => {
  it('reports ready once the server answers its probe', async () => {
    await until(() => backend.readiness().ready, 'the langgraph backend to be ready');
    expect(backend.readiness().detail).toContain(new URL(langgraph.url).host);
  });

  it('streams the answer token by token, remembering the run first, and keeps the thread for the next turn', async () => {
    const first = turnFor('hello');
    await expect(backend.run(first)).resolves.toEqual({ state: 'completed' });
    expect(first.output.answer).toBe('Echo #1: hello');
    expect(first.output.tokens.length).toBeGreaterThan(1);
    expect(first.output.calls.slice(0, 3)).toEqual(['remember', 'working', 'text']);
    // No usage events from this graph: the streamed tokens are estimated, once, when the run ends.
    expect(first.output.usages).toEqual([estimateTokens('Echo #1: hello')]);
    expect(first.output.calls.at(-1)).toBe('usage');
    const threadId = langGraphThreadId('acme', 'ada', first.contextId);
    expect(first.output.remembered).toEqual({ threadId, runId: expect.any(String) });

    const second = turnFor('again', { contextId: first.contextId });
    await expect(backend.run(second)).resolves.toEqual({ state: 'completed' });
    expect(second.output.answer).toBe('Echo #2: again');

    const session = { contextId: first.contextId, namespace: 'acme', owner: 'ada', actor: orchestrator };
    const whole = await backend.assemble(session);
    expect(whole).toEqual({
      model: undefined,
      messages: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'Echo #1: hello' },
        { role: 'user', content: 'again' },
        { role: 'assistant', content: 'Echo #2: again' },
      ],
      estimatedTokens: 2 + 4 + 2 + 4,
      omittedMessages: 0,
    });
    const trimmed = await backend.assemble({ ...session, maxTokens: 6 });
    expect(trimmed.messages).toEqual(whole.messages.slice(2));
    expect(trimmed).toMatchObject({ estimatedTokens: 6, omittedMessages: 2 });

    const thread = await client.threads.get(threadId);
    expect(thread.metadata).toMatchObject({
      cleveragents_namespace: 'acme',
      cleveragents_owner: 'ada',
      cleveragents_context_id: first.contextId,
    });
    // Another owner's session of the same contextId is another thread.
    await expect(backend.assemble({ ...session, owner: 'grace' })).resolves.toMatchObject({ messages: [] });
  });

  it('turns an interrupt into input-required and resumes the run with the client answer', async () => {
    const asked = turnFor('please ask me something', { actor: { name: 'remote', graphId: 'orchestrator', tools: [] } });
    await expect(backend.run(asked)).resolves.toEqual({
      state: 'input-required',
      text: QUESTION,
      value: { question: QUESTION },
    });
    const firstRun = asked.output.remembered.runId;

    const answered = turnFor('Ada', {
      taskId: asked.taskId,
      contextId: asked.contextId,
      actor: asked.actor,
      mode: 'resume',
      remembered: asked.output.remembered,
    });
    await expect(backend.run(answered)).resolves.toEqual({ state: 'completed' });
    expect(answered.output.answer).toBe('Thank you, Ada.');
    expect(answered.output.remembered.runId).not.toEqual(firstRun);

    // A data part answers in preference to the text.
    const again = turnFor('ask me once more', { contextId: asked.contextId });
    await expect(backend.run(again)).resolves.toMatchObject({ state: 'input-required' });
    const withData = turnFor('ignored', { contextId: asked.contextId, mode: 'resume', data: [{ name: 'Grace' }] });
    await expect(backend.run(withData)).resolves.toEqual({ state: 'completed' });
    expect(withData.output.answer).toBe('Thank you, Grace.');
  });

  it('cancels the remote run when the turn signal aborts', async () => {
    const abort = new AbortController();
    const turn = turnFor('slow please', { signal: abort.signal });
    const result = backend.run(turn);
    await until(() => turn.output.tokens.length >= 2, 'the first tokens of the slow answer');
    abort.abort();
    await expect(result).resolves.toEqual({ state: 'canceled' });

    const threadId = langGraphThreadId('acme', 'ada', turn.contextId);
    const runId = turn.output.remembered.runId as string;
    await until(
      async () => (await client.runs.get(threadId, runId)).status === 'interrupted',
      'the run to be cancelled',
    );
    expect(turn.output.answer.length).toBeLessThan(SLOW_ANSWER.length);
  });

  it('re-joins a run whose stream dropped, after a restart, without starting it again', async () => {
    const before = new LangGraphActorBackend(configFor(langgraph.url));
    const dropped = turnFor('slow story');
    const result = before.run(dropped);
    await until(() => dropped.output.tokens.length >= 3, 'the first tokens of the slow answer');
    // Our server goes away: the HTTP stream is gone, the signal never aborted, the run goes on.
    before.stop();
    await expect(result).resolves.toEqual({ state: 'canceled' });
    const threadId = langGraphThreadId('acme', 'ada', dropped.contextId);
    const runId = dropped.output.remembered.runId as string;
    expect((await client.runs.get(threadId, runId)).status).toBe('running');

    const after = new LangGraphActorBackend(configFor(langgraph.url));
    const recovered = turnFor('slow story', {
      taskId: dropped.taskId,
      contextId: dropped.contextId,
      mode: 'recover',
      remembered: dropped.output.remembered,
    });
    await expect(after.run(recovered)).resolves.toEqual({ state: 'completed' });
    expect(recovered.output.restarts).toBe(1);
    expect(recovered.output.answer).toBe(SLOW_ANSWER);
    const runs = await client.runs.list(threadId);
    expect(runs.map((run) => [run.run_id, run.status])).toEqual([[runId, 'success']]);

    // Recovering a run that has finished meanwhile reads the answer from the thread.
    const late = turnFor('slow story', { ...recovered, output: new RecordingOutput() });
    await expect(after.run(late)).resolves.toEqual({ state: 'completed', text: SLOW_ANSWER });
    expect(await client.runs.list(threadId)).toHaveLength(1);
  });

  it('fails a turn whose graph the server does not have: a stable reason, the HTTP status in the log', async () => {
    const turn = turnFor('hello', { actor: { name: 'ghost', graphId: 'no-such-graph', tools: [] } });
    const warnings = captureWarnings();
    const result = await backend.run(turn).finally(warnings.stop);
    const reason = (result as { reason: string }).reason;
    expect(result).toMatchObject({ state: 'failed', reason: expect.stringMatching(/^ACTOR_BACKEND_UNAVAILABLE: /) });
    expect(withoutCorrelationId(reason)).toBe(
      'ACTOR_BACKEND_UNAVAILABLE: the LangGraph backend could not run actor "ghost"; ' +
        'the server log has the details (correlation id <id>)',
    );
    expect(warnings.lines.find((l) => l.includes(correlationIdOf(reason)))).toContain('HTTP 404');
  });

  it('is not ready and fails turns with a clear reason when the server is down, never quoting the API key', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const down = new LangGraphActorBackend(configFor(url, 'lg-secret-key-123'), { maxRetries: 0 });
    down.start();
    try {
      await until(() => !down.readiness().detail.includes('not checked yet'), 'the first readiness probe');
      const readiness = down.readiness();
      expect(readiness.ready).toBe(false);
      expect(readiness.detail).toContain(new URL(url).host);
      expect(readiness.detail).toContain('ECONNREFUSED');

      const warnings = captureWarnings();
      const result = await down.run(turnFor('hello')).finally(warnings.stop);
      const reason = (result as { reason: string }).reason;
      // The caller learns no address, port or errno (no network probing); the log has them.
      expect(result).toEqual({ state: 'failed', reason: expect.stringMatching(/^ACTOR_BACKEND_UNAVAILABLE: /) });
      expect(withoutCorrelationId(reason)).not.toContain(new URL(url).port);
      expect(reason).not.toContain('ECONNREFUSED');
      const line = warnings.lines.find((l) => l.includes(correlationIdOf(reason)));
      expect(line).toContain(new URL(url).host);
      expect(line).toContain('could not be reached');
      expect([reason, ...warnings.lines].join('\n')).not.toContain('lg-secret-key-123');
    } finally {
      down.stop();
    }
  });

  it('is not ready when no server is configured, and says which setting to set', async () => {
    const unset = new LangGraphActorBackend(AppConfig.fromEnv({ CLEVERAGENTS_DATA_DIR: dataDir }));
    expect(unset.readiness()).toEqual({ ready: false, detail: expect.stringContaining('CLEVERAGENTS_LANGGRAPH_URL') });
    await expect(unset.run(turnFor('hello'))).resolves.toEqual({
      state: 'failed',
      reason: expect.stringContaining('CLEVERAGENTS_LANGGRAPH_URL'),
    });
  });
});

/** The protocol graph's fixed values (test/fixtures/langgraph/protocol-graph.mjs). */
const FILE_PATH = '/work/notes.txt';
const PLAN: PlanEntry[] = [
  { content: 'Read the notes', priority: 'high', status: 'pending' },
  { content: 'Summarise them', priority: 'medium', status: 'pending' },
];
const USAGE_TOKENS = 42;
const SLOW_USAGE_TOKENS = 7;
const APPROVAL_REQUEST: ApprovalRequest = {
  type: 'cleveragents/approval-request',
  requestId: 'approval-1',
  subject: {
    kind: 'tool',
    toolCallId: 'call-1',
    tool: 'fs_read_text_file',
    method: 'fs/read_text_file',
    args: { path: FILE_PATH },
  },
  options: ['approve', 'reject'],
};
const CLIENT_REQUEST: ClientRequest = {
  type: 'cleveragents/client-request',
  requests: [{ id: 'read-1', method: 'fs/read_text_file', params: { path: FILE_PATH } }],
};
const SUPERVISED: OrchestratorSetup = {
  policy: { gate: 'supervised', allowedTools: ['update_plan'] },
  tools: [
    {
      name: 'fs_read_text_file',
      description: 'Read a text file on the client',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
      runsOn: 'client',
      clientMethod: 'fs/read_text_file',
    },
  ],
};
/** An actor run on the LangGraph server's `protocol` graph. */
const protocolActor: ActorDefinition = { name: 'remote', graphId: 'protocol', tools: [] };

describe('the orchestrator protocol through the LangGraph server', () => {
  it("sends the setup with a task's first input, where the graph keeps it; a graph without the key ignores it", async () => {
    const turn = turnFor('hello', { actor: protocolActor, setup: SUPERVISED });
    await expect(backend.run(turn)).resolves.toEqual({ state: 'completed' });
    expect(turn.output.answer).toBe('Gate supervised: hello');
    const threadId = langGraphThreadId('acme', 'ada', turn.contextId);
    const state = await client.threads.getState<{ setup?: unknown }>(threadId);
    expect(state.values.setup).toEqual(SUPERVISED);
    expect(turn.output.usages).toEqual([estimateTokens('Gate supervised: hello')]);

    const plain = turnFor('hello', { setup: SUPERVISED });
    await expect(backend.run(plain)).resolves.toEqual({ state: 'completed' });
    const plainState = await client.threads.getState<Record<string, unknown>>(
      langGraphThreadId('acme', 'ada', plain.contextId),
    );
    expect(Object.keys(plainState.values)).toEqual(['messages']);
  });

  it('reports plan, tool call, tool result and usage in order, asks with typed interrupts and resumes with the responses', async () => {
    const start = turnFor('plan please', { actor: protocolActor, setup: SUPERVISED });
    await expect(backend.run(start)).resolves.toEqual({
      state: 'input-required',
      text: requestQuestion(APPROVAL_REQUEST),
      value: APPROVAL_REQUEST,
    });
    expect(start.output.reports).toEqual(['working', 'plan', 'toolCall']);
    expect(start.output.plans).toEqual([PLAN]);
    expect(start.output.toolCalls).toEqual([{ id: 'call-1', name: 'fs_read_text_file', args: { path: FILE_PATH } }]);
    expect(start.output.usages).toEqual([]); // nothing streamed, nothing reported

    const continued = {
      taskId: start.taskId,
      contextId: start.contextId,
      actor: protocolActor,
      mode: 'resume' as const,
    };
    const approved = turnFor('yes', {
      ...continued,
      data: [
        { note: 'not this one' },
        { type: 'cleveragents/approval-response', requestId: 'approval-1', decision: 'approve' },
      ],
    });
    await expect(backend.run(approved)).resolves.toEqual({
      state: 'input-required',
      text: requestQuestion(CLIENT_REQUEST),
      value: CLIENT_REQUEST,
    });
    expect(approved.output.reports).toEqual(['working']);
    expect(requestQuestion(CLIENT_REQUEST)).toContain('fs/read_text_file');

    const responded = turnFor('', {
      ...continued,
      data: [
        {
          type: 'cleveragents/client-response',
          responses: [{ id: 'read-1', result: { content: 'remember the milk' } }],
        },
      ],
    });
    await expect(backend.run(responded)).resolves.toEqual({ state: 'completed' });
    expect(responded.output.answer).toBe('The file says: remember the milk');
    expect(responded.output.reports).toEqual(['working', 'toolResult', 'usage', 'text']);
    expect(responded.output.toolResults).toEqual([
      { id: 'call-1', name: 'fs_read_text_file', result: { content: 'remember the milk' } },
    ]);
    // The graph counted its own tokens: no estimate of the streamed answer besides.
    expect(responded.output.usages).toEqual([USAGE_TOKENS]);

    // A resumed run keeps what the first input set.
    const state = await client.threads.getState<{ setup?: unknown }>(langGraphThreadId('acme', 'ada', start.contextId));
    expect(state.values.setup).toEqual(SUPERVISED);
  });

  it('ends rejected when the graph leaves a rejection in its state', async () => {
    const turn = turnFor('reject me', { actor: protocolActor });
    await expect(backend.run(turn)).resolves.toEqual({ state: 'rejected', reason: 'The plan was rejected' });
    expect(turn.output.plans).toEqual([PLAN]);

    const asked = turnFor('plan please', { actor: protocolActor });
    await expect(backend.run(asked)).resolves.toMatchObject({ state: 'input-required', value: APPROVAL_REQUEST });
    const refused = turnFor('no', {
      taskId: asked.taskId,
      contextId: asked.contextId,
      actor: protocolActor,
      mode: 'resume',
      data: [{ type: 'cleveragents/approval-response', requestId: 'approval-1', decision: 'reject' }],
    });
    await expect(backend.run(refused)).resolves.toEqual({ state: 'rejected', reason: 'The client answered "reject"' });
    expect(refused.output.toolResults).toEqual([
      { id: 'call-1', name: 'fs_read_text_file', error: { message: 'Rejected by the client' } },
    ]);

    // A later message on the same thread starts a run of its own: not rejected again.
    const later = turnFor('hello again', { contextId: asked.contextId, actor: protocolActor });
    await expect(backend.run(later)).resolves.toEqual({ state: 'completed' });
  });

  it('reports the custom events once when a restarted server re-joins the run', async () => {
    const before = new LangGraphActorBackend(configFor(langgraph.url));
    const dropped = turnFor('slow plan', { actor: protocolActor });
    const result = before.run(dropped);
    await until(() => dropped.output.tokens.length >= 3, 'the first tokens of the slow answer');
    before.stop();
    await expect(result).resolves.toEqual({ state: 'canceled' });
    expect(dropped.output.plans).toEqual([PLAN]);
    expect(dropped.output.usages).toEqual([SLOW_USAGE_TOKENS]);
    const runId = dropped.output.remembered.runId as string;
    expect(dropped.output.remembered.customEvents).toEqual({ runId, count: 2 });

    const after = new LangGraphActorBackend(configFor(langgraph.url));
    const recovered = turnFor('slow plan', {
      taskId: dropped.taskId,
      contextId: dropped.contextId,
      actor: protocolActor,
      mode: 'recover',
      remembered: dropped.output.remembered,
    });
    await expect(after.run(recovered)).resolves.toEqual({ state: 'completed' });
    expect(recovered.output.answer).toBe(SLOW_ANSWER);
    expect(recovered.output.plans).toEqual([]);
    expect(recovered.output.usages).toEqual([]); // the graph's usage was counted before the restart
  });
});

describe('a run paused by plan/pause (TURN_PAUSED)', () => {
  it('is stopped on the server, and the resumed turn continues it from its checkpoint, each event once', async () => {
    const pause = new AbortController();
    const paused = turnFor('slow plan', { actor: protocolActor, signal: pause.signal });
    const result = backend.run(paused);
    await until(() => paused.output.tokens.length >= 3, 'the first tokens of the slow answer');
    pause.abort(TURN_PAUSED);
    await expect(result).resolves.toEqual({ state: 'canceled' });
    expect(paused.output.plans).toEqual([PLAN]);
    expect(paused.output.usages).toEqual([SLOW_USAGE_TOKENS]);

    // Stopped by the time the turn let go (the cancel waited), the thread waiting at the unfinished node.
    const threadId = langGraphThreadId('acme', 'ada', paused.contextId);
    const runId = paused.output.remembered.runId as string;
    expect((await client.runs.get(threadId, runId)).status).toBe('interrupted');
    expect((await client.threads.getState(threadId)).next).toEqual(['slow']);
    expect(paused.output.remembered.pausedRun).toEqual({ runId, mode: 'start', replay: 2 });

    const resumed = turnFor('slow plan', {
      taskId: paused.taskId,
      contextId: paused.contextId,
      actor: protocolActor,
      mode: 'recover',
      remembered: paused.output.remembered,
    });
    await expect(backend.run(resumed)).resolves.toEqual({ state: 'completed' });
    expect(resumed.output.answer).toBe(SLOW_ANSWER);
    expect(resumed.output.restarts).toBe(1);
    // The node ran again and wrote its plan and usage again: passed over, reported before the pause.
    expect(resumed.output.plans).toEqual([]);
    expect(resumed.output.usages).toEqual([]);
    const next = resumed.output.remembered.runId as string;
    expect(next).not.toBe(runId);
    expect(resumed.output.remembered.pausedRun).toBeNull();
    expect(resumed.output.remembered.customEvents).toEqual({ runId: next, count: 2 });
    const runs = await client.runs.list(threadId);
    expect(runs.map((run) => [run.run_id, run.status]).sort()).toEqual(
      [
        [runId, 'interrupted'],
        [next, 'success'],
      ].sort(),
    );
    const messages = (await client.threads.getState<{ messages: { type: string; content: unknown }[] }>(threadId))
      .values.messages;
    expect(messages.map((m) => [m.type, m.content])).toEqual([
      ['human', 'slow plan'],
      ['ai', SLOW_ANSWER],
    ]);
  });

  it('paused before its run started, an answer to an interrupt is sent again on resume, and the next one is answered', async () => {
    const asked = turnFor('plan please', { actor: protocolActor });
    await expect(backend.run(asked)).resolves.toMatchObject({ state: 'input-required', value: APPROVAL_REQUEST });
    const continued = { taskId: asked.taskId, contextId: asked.contextId, actor: protocolActor };
    const approval = [{ type: 'cleveragents/approval-response', requestId: 'approval-1', decision: 'approve' }];
    const pause = new AbortController();
    pause.abort(TURN_PAUSED);
    const paused = turnFor('yes', {
      ...continued,
      mode: 'resume',
      data: approval,
      remembered: asked.output.remembered,
      signal: pause.signal,
    });
    await expect(backend.run(paused)).resolves.toEqual({ state: 'canceled' });
    expect(paused.output.remembered.pausedRun).toEqual({ runId: null, mode: 'resume', replay: 0 });

    const resumed = turnFor('yes', {
      ...continued,
      mode: 'recover',
      data: approval,
      remembered: paused.output.remembered,
    });
    await expect(backend.run(resumed)).resolves.toEqual({
      state: 'input-required',
      text: requestQuestion(CLIENT_REQUEST),
      value: CLIENT_REQUEST,
    });
    const responded = turnFor('', {
      ...continued,
      mode: 'resume',
      remembered: resumed.output.remembered,
      data: [{ type: 'cleveragents/client-response', responses: [{ id: 'read-1', result: { content: 'milk' } }] }],
    });
    await expect(backend.run(responded)).resolves.toEqual({ state: 'completed' });
    expect(responded.output.answer).toBe('The file says: milk');
  });
});

/** A TCP proxy on loopback in front of `target`, whose open connections can be cut at once. */
async function startCuttableProxy(target: URL): Promise<{ url: string; cut(): number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = connect(Number(target.port), target.hostname);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    cut: () => {
      const count = sockets.size;
      for (const s of sockets) s.destroy();
      return count;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('a stream that drops mid-run', () => {
  it('is re-joined: the same run goes on to completion, its answer streamed again from the start', async () => {
    const proxy = await startCuttableProxy(new URL(langgraph.url));
    const viaProxy = new LangGraphActorBackend(configFor(proxy.url));
    try {
      const turn = turnFor('slow, with a dropped connection');
      const running = viaProxy.run(turn);
      await until(() => turn.output.tokens.length >= 5, 'some tokens to arrive', 10000);
      expect(proxy.cut()).toBeGreaterThan(0); // the HTTP stream is gone; the run goes on on the server
      await expect(running).resolves.toEqual({ state: 'completed' });
      expect(turn.output.restarts).toBeGreaterThanOrEqual(1);
      expect(turn.output.answer).toBe(SLOW_ANSWER);
      const runs = await client.runs.list(langGraphThreadId('acme', 'ada', turn.contextId));
      expect(runs.map((r) => r.status)).toEqual(['success']); // one run: re-joined, never started again
    } finally {
      viaProxy.stop();
      await proxy.close();
    }
  });

  it('still reports the custom events of a re-joined run, each once, and its usage once', async () => {
    const proxy = await startCuttableProxy(new URL(langgraph.url));
    const viaProxy = new LangGraphActorBackend(configFor(proxy.url));
    try {
      const turn = turnFor('slow plan, with a dropped connection', { actor: protocolActor });
      const running = viaProxy.run(turn);
      await until(() => turn.output.tokens.length >= 5, 'some tokens to arrive', 10000);
      expect(proxy.cut()).toBeGreaterThan(0);
      await expect(running).resolves.toEqual({ state: 'completed' });
      expect(turn.output.restarts).toBeGreaterThanOrEqual(1);
      expect(turn.output.answer).toBe(SLOW_ANSWER);
      expect(turn.output.plans).toEqual([PLAN]);
      expect(turn.output.usages).toEqual([SLOW_USAGE_TOKENS]);
    } finally {
      viaProxy.stop();
      await proxy.close();
    }
  });
});
