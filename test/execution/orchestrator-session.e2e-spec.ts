import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { Client, ClientFactory } from '@a2a-js/sdk/client';
import { derivedContent, FINAL_ANSWER_PREFIX, planEntries, writtenPath } from '../fixtures/orchestrator-scenario.mjs';
import {
  CAPABILITIES,
  sendRequestOf,
  statusData,
  toolArtifacts,
  wireMessage,
  type Json,
} from '../support/orchestration.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import {
  COMPILED_ORCHESTRATOR_GRAPH,
  startLangGraphServer,
  type LangGraphServer,
} from '../support/langgraph-server.js';
import {
  OpenAiCompatibleEndpoint,
  offeredToolNames,
  scenarioMessagesOf,
  scenarioReply,
} from '../support/openai-endpoint.js';
import { extensionCalls, startServer } from '../support/server.js';
import { DIST_MAIN } from '../support/stdio-client.js';
import { collect, partText, stateOf } from '../support/streams.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';
import { connect } from '../../packages/client/src/node.js';

/*
 * The headline of docs/protocol.md §5, end to end through the official SDK client: a whole orchestrated session
 * — plan, gates, client-side tools, plan updates, final answer — on each backend and under each
 * automation profile. The model plays the orchestrator scenario (test/fixtures/orchestrator-scenario.mjs):
 * a plan of three entries, fs_read_text_file on the path the user named, fs_write_text_file of what it
 * derived to `<path>.upper`, the plan all completed, then "Done: read <path>, wrote <path>.upper.".
 * - local: the server's in-process orchestrator graph calls a real ChatOpenAI client against a loopback
 *   OpenAI-compatible endpoint that answers the scenario with streamed `delta.tool_calls`;
 * - remote: the same graph, compiled to dist/, runs on a real LangGraph API server
 *   (test/fixtures/langgraph/orchestrator-real.mjs) over a scripted model playing the same scenario.
 * The test plays the client: it answers approval-requests and runs client-requests against an in-memory
 * file map.
 * Each transport of docs/protocol.md §2.2 carries the sessions of both backends with the same assertions:
 * HTTP, and stdio (the client library in local mode spawns `node dist/main.js --stdio`; its `a2a` is the
 * same SDK `Client`, over the SDK's JSON-RPC transport carried on stdin/stdout). The last test compares
 * what the two transports gave, session by session.
 */

const FILE_PATH = '/work/notes.txt';
const FILE_TEXT = 'hello notes\nsecond line';
const ASK = `Uppercase ${FILE_PATH}`;
const CLIENT_TOOLS = ['update_plan', 'fs_read_text_file', 'fs_write_text_file'];
const FINAL_ANSWER = `${FINAL_ANSWER_PREFIX} read ${FILE_PATH}, wrote ${writtenPath(FILE_PATH)}.`;
/** What the loopback endpoint reports per model call (local): 20 prompt + 3 completion tokens. */
const ENDPOINT_USAGE = { promptTokens: 20, completionTokens: 3 };
/** What the remote fixture's model reports per call (orchestrator-real.mjs USAGE_PER_CALL). */
const REMOTE_TOKENS_PER_CALL = 11;
/** Model calls of the whole scenario: plan, read, write, plan completed, answer. */
const SCENARIO_MODEL_CALLS = 5;

/** The `cleveragents/plan` data parts of the WORKING status updates (the plan as it changed). */
function planUpdates(events: readonly StreamResponse[]): Json[] {
  return events
    .filter((e) => stateOf(e) === TaskState.TASK_STATE_WORKING)
    .flatMap((e) => statusData(e))
    .filter((d) => d.type === 'cleveragents/plan')
    .map((d) => d.plan as Json);
}

/** A gate the client was asked to pass: the approval-request's subject kind, and the tool for a tool gate. */
interface Gate {
  kind: string;
  tool?: string;
  args?: Json;
}

/** How the client answers an approval-request (approve unless told). */
type Decide = (approval: Json) => Json;

const approve: Decide = () => ({ decision: 'approve' });

/** What the client saw and did during one session. */
interface Played {
  contextId: string;
  taskId: string;
  events: StreamResponse[];
  gates: Gate[];
  clientRequests: Json[];
  rounds: number;
}

/** Runs a client-side call against the in-memory file map, as a client would on its disk. */
function runClientCall(files: Map<string, string>, call: Json): Json {
  const path = String(call.params?.path);
  switch (call.method) {
    case 'fs/read_text_file': {
      const content = files.get(path);
      return content === undefined
        ? { id: call.id, error: { code: -32002, message: `No such file: ${path}` } }
        : { id: call.id, result: { content } };
    }
    case 'fs/write_text_file':
      files.set(path, String(call.params?.content));
      return { id: call.id, result: {} };
    default:
      return { id: call.id, error: { code: -32601, message: `Not handled here: ${call.method}` } };
  }
}

/** A server started for one describe block: the SDK client on it, `_cleveragents/*` calls that must succeed. */
interface Connected {
  client: Client;
  ok(method: string, params?: Json): Promise<Json>;
  close(): Promise<void>;
}

/** How the client reaches the server (docs/protocol.md §2.2). */
interface Transport {
  name: 'http' | 'stdio';
  /** Starts the server on `db` with `env` (the backend's) and connects to it. */
  start(db: TestDatabase, env: Record<string, string>): Promise<Connected>;
}

const transports: Transport[] = [
  {
    name: 'http',
    start: async (db, env) => {
      const server = await startServer(db, env);
      const { ok } = extensionCalls(() => server);
      try {
        const client = await new ClientFactory().createFromUrl(server.baseUrl);
        return { client, ok: (method, params) => ok(method, params) as Promise<Json>, close: () => server.close() };
      } catch (error) {
        await server.close();
        throw error;
      }
    },
  },
  {
    name: 'stdio',
    start: async (db, env) => {
      // Embedded: the database's own data directory; PostgreSQL: DATABASE_URL, and a data directory of its own.
      const ownDataDir = db.kind === 'embedded' ? undefined : await mkdtemp(join(tmpdir(), 'ca-orch-stdio-'));
      const dataDir = ownDataDir ?? db.env.CLEVERAGENTS_DATA_DIR;
      const removeOwn = async () => {
        if (ownDataDir) await rm(ownDataDir, { recursive: true, force: true });
      };
      try {
        const lib = await connect({
          local: {
            dataDir,
            serverEntry: DIST_MAIN,
            // As startServer configures the HTTP server: migrate at start, the `none` scheme.
            env: { ...db.env, CLEVERAGENTS_MIGRATE_ON_START: 'true', CLEVERAGENTS_AUTH_SCHEMES: 'none', ...env },
            closeTimeoutMs: 15_000,
          },
        });
        return {
          client: lib.a2a,
          ok: (method, params = {}) => lib.call(`_cleveragents/${method}`, params),
          close: async () => {
            await lib.close();
            await removeOwn();
          },
        };
      } catch (error) {
        await removeOwn();
        throw error;
      }
    },
  },
];

/** The profiles a whole session is played under. */
const PROFILES = ['manual', 'supervised-reads', 'autonomous'] as const;

/**
 * An event as its kind and state, or its artifact, to compare streams without ids or timestamps: a tool
 * call's artifact by its id (the model's call id), the answer's by its name (its id names the message).
 */
function shapeOf(event: StreamResponse): string {
  const p = event.payload;
  if (p?.$case !== 'artifactUpdate') return `${p?.$case}:${stateOf(event)}`;
  const { name, artifactId } = p.value.artifact ?? {};
  return `artifact:${name === 'tool-call' ? artifactId : name}:${p.value.append}`;
}

/** What a session gave the client, without ids or timestamps: the part both transports must give alike. */
function comparable(played: Played, done: Task, usage: Json): Json {
  return {
    events: played.events.map(shapeOf),
    gates: played.gates,
    clientRequests: played.clientRequests,
    plans: planUpdates(played.events).map(({ status, entries }) => ({ status, entries })),
    toolArtifacts: toolArtifacts(played.events),
    state: done.status?.state,
    answer: partText(done.status?.message?.parts[0]),
    artifacts: done.artifacts.map((a) => ({ name: a.name, parts: a.parts.map((part) => part.content) })),
    usage: { tokens: usage.tokens as number, toolCalls: usage.toolCalls as number },
  };
}

interface Backend {
  name: 'local' | 'remote';
  /** The server's environment. */
  env(): Record<string, string>;
  /** The actor a session names. */
  actor: string;
  /** Tokens one model call reports. */
  tokensPerCall: number;
}

const describeLocalAndRemote = (target: ReturnType<typeof databaseTargets>[number]) => {
  let model: OpenAiCompatibleEndpoint;
  let langgraph: LangGraphServer;

  beforeAll(async () => {
    if (!existsSync(COMPILED_ORCHESTRATOR_GRAPH)) {
      throw new Error(`${COMPILED_ORCHESTRATOR_GRAPH} is missing: run npm run build first (npm test does)`);
    }
    model = await OpenAiCompatibleEndpoint.start(scenarioReply(ENDPOINT_USAGE));
    langgraph = await startLangGraphServer();
  }, 120_000);

  afterAll(async () => {
    await ifAssigned(model)?.close();
    await ifAssigned(langgraph)?.close();
  });

  const backends: Backend[] = [
    {
      name: 'local',
      env: () => ({
        CLEVERAGENTS_ACTOR_BACKEND: 'local',
        CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
        CLEVERAGENTS_MODEL: 'scenario-model',
      }),
      actor: 'default',
      tokensPerCall: ENDPOINT_USAGE.promptTokens + ENDPOINT_USAGE.completionTokens,
    },
    {
      name: 'remote',
      env: () => ({ CLEVERAGENTS_ACTOR_BACKEND: 'langgraph', CLEVERAGENTS_LANGGRAPH_URL: langgraph.url }),
      actor: 'remote-orchestrator',
      tokensPerCall: REMOTE_TOKENS_PER_CALL,
    },
  ];

  /** Each whole session's comparable result, by `<transport> <backend> <profile>`. */
  const results = new Map<string, Json>();

  const runs = transports.flatMap((transport) => backends.map((backend) => ({ transport, backend })));

  describe.each(runs)('over $transport.name, on the $backend.name backend', ({ transport, backend }) => {
    let db: TestDatabase;
    let connected: Connected;
    let client: Client;
    const ok = (method: string, params: Json = {}): Promise<Json> => connected.ok(method, params);

    beforeAll(async () => {
      db = await target.create();
      connected = await transport.start(db, backend.env());
      client = connected.client;
      if (backend.name === 'remote') {
        await ok('registry/create', {
          kind: 'actor',
          name: backend.actor,
          spec: { description: 'the real orchestrator graph on LangGraph', graphId: 'orchestrator-real', tools: [] },
        });
      }
      // Supervised with reads allowed: a profile takes the admin role (the `none` scheme's principal owns).
      await ok('registry/create', {
        kind: 'profile',
        name: 'supervised-reads',
        spec: {
          description: 'Approve the plan and writes; reads run',
          gate: 'supervised',
          allowedTools: ['fs_read_text_file'],
        },
      });
    }, 120_000);

    afterAll(async () => {
      await ifAssigned(connected)?.close();
      await ifAssigned(db)?.cleanup();
    }, 30_000);

    /**
     * One session played by the client to its end: the request (with the capabilities unless told
     * otherwise), then an answer to each input-required — the approval decided by `decide`, the
     * client-requests run against `files` — each on the same task, until the task rests otherwise.
     */
    async function play(
      profile: string,
      files: Map<string, string>,
      options: { decide?: Decide; metadata?: Json } = {},
    ): Promise<Played> {
      const { decide = approve, metadata = CAPABILITIES } = options;
      const contextId = (await ok('session/create', { actor: backend.actor, profile })).sessionId as string;
      const played: Played = { contextId, taskId: '', events: [], gates: [], clientRequests: [], rounds: 0 };
      let next = sendRequestOf(wireMessage(ASK, { contextId, metadata }));
      for (;;) {
        const events = await collect(client.sendMessageStream(next));
        played.events.push(...events);
        played.rounds += 1;
        if (!played.taskId) played.taskId = (events[0].payload as { value: Task }).value.id;
        const last = events.at(-1);
        if (stateOf(last) !== TaskState.TASK_STATE_INPUT_REQUIRED || played.rounds > 20) return played;
        const data = statusData(last);
        const approval = data.find((d) => d.type === 'cleveragents/approval-request');
        const asked = data.find((d) => d.type === 'cleveragents/client-request');
        let answer: Json;
        if (approval) {
          const { kind, tool, args } = approval.subject as Json;
          played.gates.push(kind === 'tool' ? { kind, tool, args } : { kind });
          answer = { type: 'cleveragents/approval-response', requestId: approval.requestId, ...decide(approval) };
        } else if (asked) {
          played.clientRequests.push(...(asked.requests as Json[]));
          answer = {
            type: 'cleveragents/client-response',
            responses: (asked.requests as Json[]).map((call) => runClientCall(files, call)),
          };
        } else {
          throw new Error(`input-required without a request: ${JSON.stringify(data)}`);
        }
        next = sendRequestOf(wireMessage('', { taskId: played.taskId, contextId }, [answer]));
      }
    }

    const getTask = (id: string): Promise<Task> => client.getTask({ tenant: '', id, historyLength: 0 });

    /** The session's usage once the counts settled to `toolCalls` tool calls. */
    async function usageOf(sessionId: string, toolCalls: number): Promise<Json> {
      await until(
        async () => (await ok('session/get', { sessionId })).usage?.toolCalls === toolCalls,
        `${toolCalls} tool calls counted`,
      );
      return (await ok('session/get', { sessionId })).usage as Json;
    }

    const readGate: Gate = { kind: 'tool', tool: 'fs_read_text_file', args: { path: FILE_PATH } };
    const writeArgs = { path: writtenPath(FILE_PATH), content: derivedContent(FILE_TEXT) };
    const writeGate: Gate = { kind: 'tool', tool: 'fs_write_text_file', args: writeArgs };

    it.each([
      { profile: 'manual', gates: [{ kind: 'plan' }, readGate, writeGate] },
      { profile: 'supervised-reads', gates: [{ kind: 'plan' }, writeGate] },
      { profile: 'autonomous', gates: [] },
    ])(
      'under $profile: the gates the profile sets, the client tools run by the client, the plan carried out, the answer',
      async ({ profile, gates }) => {
        const files = new Map([[FILE_PATH, FILE_TEXT]]);
        const sentBefore = model.requests.length;
        const played = await play(profile, files);
        const { events, taskId, contextId } = played;

        // The task completes with the scenario's answer; the gates were exactly those of the profile.
        expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(played.gates).toEqual(gates);
        expect(played.rounds).toBe(gates.length + 3);

        // The client ran the two client tools; the written file holds what was derived from the read.
        expect(played.clientRequests).toEqual([
          { id: 'call-2', method: 'fs/read_text_file', params: { path: FILE_PATH } },
          { id: 'call-3', method: 'fs/write_text_file', params: writeArgs },
        ]);
        expect(Object.fromEntries(files)).toEqual({
          [FILE_PATH]: FILE_TEXT,
          [writtenPath(FILE_PATH)]: derivedContent(FILE_TEXT),
        });

        // The plan: first its three pending entries, at last all completed; one planId throughout.
        const plans = planUpdates(events);
        expect(plans.length).toBeGreaterThanOrEqual(2);
        expect(plans[0].entries).toEqual(planEntries(FILE_PATH));
        expect(plans.at(-1)!.entries).toEqual(planEntries(FILE_PATH, true));
        const planId = plans[0].planId as string;
        expect(planId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
        const allPlanIds = events.flatMap((e) => statusData(e)).filter((d) => d.type === 'cleveragents/plan');
        expect(new Set(allPlanIds.map((d) => d.plan.planId))).toEqual(new Set([planId]));
        const stored = await ok('plan/get', { planId });
        expect(stored).toMatchObject({ planId, taskId, sessionId: contextId, entries: planEntries(FILE_PATH, true) });
        // The plan executed and completed with its task (behind a gate, once approved: see below).
        expect(stored.status).toBe('completed');

        // Each client tool: an artifact with its call, then its result appended (update_plan is no tool call).
        expect(toolArtifacts(events)).toEqual([
          {
            artifactId: 'tool-call-2',
            append: false,
            lastChunk: false,
            data: {
              type: 'cleveragents/tool-call',
              id: 'call-2',
              name: 'fs_read_text_file',
              args: { path: FILE_PATH },
            },
          },
          {
            artifactId: 'tool-call-2',
            append: true,
            lastChunk: true,
            data: {
              type: 'cleveragents/tool-result',
              id: 'call-2',
              name: 'fs_read_text_file',
              result: { content: FILE_TEXT },
            },
          },
          {
            artifactId: 'tool-call-3',
            append: false,
            lastChunk: false,
            data: { type: 'cleveragents/tool-call', id: 'call-3', name: 'fs_write_text_file', args: writeArgs },
          },
          {
            artifactId: 'tool-call-3',
            append: true,
            lastChunk: true,
            data: { type: 'cleveragents/tool-result', id: 'call-3', name: 'fs_write_text_file', result: {} },
          },
        ]);

        // The task as stored: the answer, the plan completed in its final status, the tool artifacts whole.
        const done = await getTask(taskId);
        expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(partText(done.status?.message?.parts[0] as never)).toBe(FINAL_ANSWER);
        const finalPlan = statusData(done).find((d) => d.type === 'cleveragents/plan')?.plan;
        expect(finalPlan).toMatchObject({ planId, entries: planEntries(FILE_PATH, true) });
        if (profile === 'autonomous') expect(finalPlan?.status).toBe('completed');
        const answer = done.artifacts.find((a) => a.name === 'answer');
        expect(answer?.parts.map((p) => partText(p as never)).join('')).toBe(FINAL_ANSWER);
        const storedTools = done.artifacts.filter((a) => a.name === 'tool-call');
        expect(
          storedTools.map((a) => [a.artifactId, a.parts.map((p) => (p.content as { value: Json }).value.type)]),
        ).toEqual([
          ['tool-call-2', ['cleveragents/tool-call', 'cleveragents/tool-result']],
          ['tool-call-3', ['cleveragents/tool-call', 'cleveragents/tool-result']],
        ]);

        // Counted: one tool call per client tool run; the tokens the model reported for its five calls.
        const usage = await usageOf(contextId, 2);
        expect(usage.tokens).toBe(SCENARIO_MODEL_CALLS * backend.tokensPerCall);
        results.set(`${transport.name} ${backend.name} ${profile}`, comparable(played, done, usage));

        if (backend.name === 'local') {
          // The model was offered update_plan and exactly the client tools the client declared.
          const sent = model.requests.slice(sentBefore);
          expect(sent).toHaveLength(SCENARIO_MODEL_CALLS);
          for (const req of sent) {
            expect(offeredToolNames(req.body)).toEqual(CLIENT_TOOLS);
            expect(req.body).toMatchObject({ model: 'scenario-model', stream: true });
          }
          // What it saw last: the whole exchange, each tool's result under its call's id.
          const seen = scenarioMessagesOf(sent.at(-1)!.body);
          expect(seen.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.status])).toEqual([
            ['call-1', 'success'],
            ['call-2', 'success'],
            ['call-3', 'success'],
            ['call-4', 'success'],
          ]);
          expect(seen.find((m) => m.toolCallId === 'call-2')?.content).toBe(JSON.stringify({ content: FILE_TEXT }));
        }
      },
      120_000,
    );

    // Behind a gate the plan is shown as a draft when it is asked for, then executing once approved.
    it.each(['manual', 'supervised-reads'])(
      'under %s: the plan approved at its gate executes, then completes with its task',
      async (profile) => {
        const played = await play(profile, new Map([[FILE_PATH, FILE_TEXT]]));
        expect(stateOf(played.events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
        const plans = planUpdates(played.events);
        expect(plans.map((p) => p.status)).toEqual(['draft', ...plans.slice(1).map(() => 'executing')]);
        const planId = plans[0].planId as string;
        expect(await ok('plan/get', { planId })).toMatchObject({ status: 'completed', taskId: played.taskId });
        const done = await getTask(played.taskId);
        expect(statusData(done).find((d) => d.type === 'cleveragents/plan')?.plan).toMatchObject({
          planId,
          status: 'completed',
        });
      },
      120_000,
    );

    it('a write the user rejects: the model is told, marks the step failed and answers; nothing is written', async () => {
      const files = new Map([[FILE_PATH, FILE_TEXT]]);
      const sentBefore = model.requests.length;
      const played = await play('manual', files, {
        decide: (approval) =>
          approval.subject.tool === 'fs_write_text_file' ? { decision: 'reject' } : { decision: 'approve' },
      });
      const { events, taskId, contextId } = played;
      expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(played.gates).toEqual([{ kind: 'plan' }, readGate, writeGate]);
      // Only the read ran on the client; the file map is as it was.
      expect(played.clientRequests).toEqual([
        { id: 'call-2', method: 'fs/read_text_file', params: { path: FILE_PATH } },
      ]);
      expect(Object.fromEntries(files)).toEqual({ [FILE_PATH]: FILE_TEXT });

      const rejected = 'Error: The call was rejected by the user';
      const done = await getTask(taskId);
      expect(partText(done.status?.message?.parts[0] as never)).toBe(
        `${FINAL_ANSWER_PREFIX} read ${FILE_PATH}, the write failed (${rejected}).`,
      );
      const plans = planUpdates(events);
      expect(plans.at(-1)!.entries).toEqual(planEntries(FILE_PATH, true, true));
      // The rejected write never ran: its artifact is one chunk, the call as the model asked for it and
      // its error result (no append to a chunk that was never sent). As stored too.
      const storedWrite = done.artifacts.find((a) => a.artifactId === 'tool-call-3');
      expect(storedWrite?.parts.map((p) => (p.content as { value: Json }).value.type)).toEqual([
        'cleveragents/tool-call',
        'cleveragents/tool-result',
      ]);
      expect(toolArtifacts(events).filter((a) => a.artifactId === 'tool-call-3')).toEqual([
        {
          artifactId: 'tool-call-3',
          append: false,
          lastChunk: true,
          data: { type: 'cleveragents/tool-call', id: 'call-3', name: 'fs_write_text_file', args: writeArgs },
          more: [
            {
              type: 'cleveragents/tool-result',
              id: 'call-3',
              name: 'fs_write_text_file',
              error: { message: 'The call was rejected by the user' },
            },
          ],
        },
      ]);
      expect((await usageOf(contextId, 1)).toolCalls).toBe(1);
      if (backend.name === 'local') {
        const seen = scenarioMessagesOf(model.requests.at(-1)!.body);
        expect(seen.find((m) => m.toolCallId === 'call-3')).toMatchObject({ content: rejected, status: 'error' });
        expect(model.requests.length - sentBefore).toBe(SCENARIO_MODEL_CALLS);
      }
    }, 120_000);

    it('a write whose arguments the user edits: the client is asked to write the edited arguments', async () => {
      const files = new Map([[FILE_PATH, FILE_TEXT]]);
      const edited = { path: writtenPath(FILE_PATH), content: 'EDITED' };
      const played = await play('manual', files, {
        decide: (approval) =>
          approval.subject.tool === 'fs_write_text_file' ? { decision: 'edit', edited } : { decision: 'approve' },
      });
      expect(stateOf(played.events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(played.gates).toEqual([{ kind: 'plan' }, readGate, writeGate]);
      expect(played.clientRequests).toEqual([
        { id: 'call-2', method: 'fs/read_text_file', params: { path: FILE_PATH } },
        { id: 'call-3', method: 'fs/write_text_file', params: edited },
      ]);
      expect(files.get(writtenPath(FILE_PATH))).toBe('EDITED');
      // The tool call reported is the one that ran: with the edited arguments.
      expect(toolArtifacts(played.events).find((a) => a.artifactId === 'tool-call-3')?.data).toEqual({
        type: 'cleveragents/tool-call',
        id: 'call-3',
        name: 'fs_write_text_file',
        args: edited,
      });
      expect(partText((await getTask(played.taskId)).status?.message?.parts[0] as never)).toBe(FINAL_ANSWER);
    }, 120_000);

    if (backend.name === 'local') {
      it('a client that declares no capabilities: only update_plan is offered, and no client-request is made', async () => {
        const files = new Map([[FILE_PATH, FILE_TEXT]]);
        const sentBefore = model.requests.length;
        const played = await play('autonomous', files, { metadata: {} });
        expect(stateOf(played.events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
        const sent = model.requests.slice(sentBefore);
        expect(sent.length).toBeGreaterThan(0);
        for (const req of sent) expect(offeredToolNames(req.body)).toEqual(['update_plan']);
        expect(played.gates).toEqual([]);
        expect(played.clientRequests).toEqual([]);
        // The scenario still asks for the read; the graph refuses a tool it did not offer, and the model says so.
        const answer = partText((await getTask(played.taskId)).status?.message?.parts[0]);
        expect(answer).toMatch(
          /^I could not read \/work\/notes\.txt: Error: The tool fs_read_text_file is not offered/,
        );
        expect(Object.fromEntries(files)).toEqual({ [FILE_PATH]: FILE_TEXT });
      }, 120_000);
    }
  });

  it('over stdio each session gives what it gives over HTTP: gates, client requests, plan, artifacts, answer, usage', () => {
    for (const backend of backends) {
      for (const profile of PROFILES) {
        const overHttp = results.get(`http ${backend.name} ${profile}`);
        const overStdio = results.get(`stdio ${backend.name} ${profile}`);
        if (!overHttp || !overStdio) {
          throw new Error(`the ${profile} session on ${backend.name} did not complete on both transports`);
        }
        expect(overStdio).toEqual(overHttp);
      }
    }
  });
};

describe.each(databaseTargets())('an orchestrated session through the SDK client, on $kind', describeLocalAndRemote);
