import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { TaskState } from '@a2a-js/sdk';
import express, { type RequestHandler } from 'express';
import { cliHome, runCli, shown, type CliHome, type CliRun } from '../support/cli.js';
import {
  clientScenarioReply,
  SCENARIO_TEXT,
  scenarioServerEnv,
  scenarioWorkspace,
  upperPath,
} from '../support/client-scenario.js';
import { createEmbeddedTestDatabase, databaseTargets, TEST_DEFAULTS, type TestDatabase } from '../support/database.js';
import { sdkAgentCard, startSdkAgent, taskEvents, text, type SdkAgent } from '../support/a2a-test-agent.js';
import { startLangGraphServer, type LangGraphServer } from '../support/langgraph-server.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startProcess, stopAll, type ServerProcess } from '../support/server-process.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * One `cleveragents send`, one trace (docs/operations.md, "Traces"): the built CLI and the server, each a
 * real process, export OTLP (http/json) to a receiver in this test. The trace holds the command's span,
 * the CLI's request spans, the server's span of each call under them, the turns, the model calls with
 * their token usage and the tool calls on both sides; it continues into a LangGraph run (the LangGraph API
 * server sees its traceparent) and into an external A2A agent (which sees its traceparent too). With
 * tracing off on both sides, nothing is sent. No prompt, file content or path is in any span.
 */

const SERVER = 2;
const CLIENT = 3;
const USAGE = { promptTokens: 20, completionTokens: 3 };
const TRACE_LINE = /^trace ([0-9a-f]{32})$/m;

describe('one cleveragents send, one trace', () => {
  let receiver: OtlpReceiver;
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let home: CliHome;
  let langgraph: LangGraphServer;
  let agent: SdkAgent;
  const agentTraceparents: string[] = [];
  const servers: ServerProcess[] = [];

  const recordTraceparent: RequestHandler = (req, _res, next) => {
    if (typeof req.headers.traceparent === 'string') agentTraceparents.push(req.headers.traceparent);
    next();
  };

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    model = await OpenAiCompatibleEndpoint.start(clientScenarioReply(USAGE));
    db = await databaseTargets().at(-1)!.create();
    home = await cliHome();
    langgraph = await startLangGraphServer({ recordTraceHeaders: true });
    agent = await startSdkAgent({
      card: (url) => sdkAgentCard(url, { name: 'Traced agent', description: 'answers, noting traceparent' }),
      executor: {
        execute: (context, bus) => {
          const events = taskEvents(context, bus);
          events.open();
          events.artifact('answer', 'answer', [text('from afar')]);
          events.status(TaskState.TASK_STATE_COMPLETED);
          bus.finished();
          return Promise.resolve();
        },
        cancelTask: () => Promise.resolve(),
      },
      before: [express.json(), recordTraceparent],
    });
  }, 120_000);

  afterAll(async () => {
    await stopAll(servers);
    await ifAssigned(agent)?.close();
    await ifAssigned(langgraph)?.close();
    await ifAssigned(receiver)?.close();
    await ifAssigned(model)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(home)?.cleanup();
  });

  const startServer = async (env: Record<string, string>): Promise<ServerProcess> => {
    const server = await startProcess({
      ...TEST_DEFAULTS,
      ...db.env,
      LOG_LEVEL: 'info',
      CLEVERAGENTS_AUTH_SCHEMES: 'none',
      CLEVERAGENTS_MIGRATE_ON_START: 'true',
      ...env,
    });
    servers.push(server);
    return server;
  };

  const cli = (args: string[], env: Record<string, string>): Promise<CliRun> => runCli(args, { home, env });

  /** `cleveragents send` of the client-side scenario (read, write, wc) in a new workspace, every gate approved. */
  async function sendScenario(
    server: ServerProcess,
    name: string,
    flags: string[],
    env: Record<string, string>,
  ): Promise<{ run: CliRun; file: string }> {
    const { dir, file } = await scenarioWorkspace(home.dir, name);
    const args = ['--workspace', dir, '--approve', 'all', '--allow-writes', '--allow-commands', `Uppercase ${file}`];
    return { run: await cli(['--server', server.baseUrl, ...flags, 'send', ...args], env), file };
  }

  /**
   * The trace the run printed the id of, once `done` holds over its spans and the trace is whole: every
   * span's parent has arrived too (each process exports on its own schedule).
   */
  async function traceOf(run: CliRun, done: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
    expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
    const traceId = TRACE_LINE.exec(run.stderr)?.[1];
    expect(traceId).toEqual(expect.any(String));
    const inTrace = (all: ReceivedSpan[]) => all.filter((s) => s.traceId === traceId);
    const whole = (spans: ReceivedSpan[]) => {
      const ids = new Set(spans.map((s) => s.spanId));
      return spans.every((s) => s.parentSpanId === undefined || ids.has(s.parentSpanId));
    };
    return inTrace(await receiver.waitForSpans((all) => done(inTrace(all)) && whole(inTrace(all)), 30_000));
  }

  const byId = (spans: ReceivedSpan[]) => new Map(spans.map((s) => [s.spanId, s]));
  /** The names of a span's ancestors in the trace, nearest first. */
  function ancestry(span: ReceivedSpan, spans: ReceivedSpan[]): string[] {
    const index = byId(spans);
    const names: string[] = [];
    for (let at = index.get(span.parentSpanId ?? ''); at; at = index.get(at.parentSpanId ?? '')) names.push(at.name);
    return names;
  }

  it('holds the command, its calls, the turns, the model calls with usage and the tool calls', async () => {
    const server = await startServer({ ...scenarioServerEnv(model), ...receiver.env() });
    const { run, file } = await sendScenario(server, 'traced', ['--trace'], receiver.env());
    const spans = await traceOf(
      run,
      (all) =>
        all.some((s) => s.name === 'cleveragents send') &&
        all.some((s) => s.name.startsWith('invoke_agent') && s.attributes['cleveragents.turn.state'] === 'completed'),
    );
    expect(await readFile(upperPath(file), 'utf8')).toBe(SCENARIO_TEXT.toUpperCase());

    // Two services, one trace, one root: the command.
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['cleveragents', 'cleveragents-server']));
    const roots = spans.filter((s) => s.parentSpanId === undefined);
    expect(roots.map((s) => [s.service, s.name])).toEqual([['cleveragents', 'cleveragents send']]);

    // Each server span is the child of one of the CLI's request spans for the same method.
    const index = byId(spans);
    const serverCalls = spans.filter((s) => s.service === 'cleveragents-server' && s.kind === SERVER);
    expect(serverCalls.length).toBeGreaterThanOrEqual(2);
    for (const call of serverCalls) {
      const parent = index.get(call.parentSpanId ?? '');
      expect({ call: call.name, parent: parent && [parent.service, parent.kind, parent.name] }).toEqual({
        call: call.name,
        parent: ['cleveragents', CLIENT, call.name],
      });
    }

    // The turns run under the calls that started them; the last one completed.
    const turns = spans.filter((s) => s.name === 'invoke_agent default');
    expect(turns.length).toBeGreaterThanOrEqual(2);
    for (const turn of turns) expect(index.get(turn.parentSpanId ?? '')?.kind).toBe(SERVER);
    expect(turns.map((t) => t.attributes['cleveragents.turn.state'])).toContain('completed');

    // The model calls, under a turn, with the usage the endpoint reported.
    const chats = spans.filter((s) => s.name === 'chat client-scenario');
    expect(chats.length).toBe(model.completions.length);
    for (const chat of chats) {
      expect(chat.kind).toBe(CLIENT);
      expect(ancestry(chat, spans)).toContain('invoke_agent default');
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'client-scenario',
        'gen_ai.usage.input_tokens': USAGE.promptTokens,
        'gen_ai.usage.output_tokens': USAGE.completionTokens,
      });
    }

    // The file read: asked by the server's turn, run by the CLI, the same call id on both sides.
    const asked = spans.find((s) => s.service === 'cleveragents-server' && s.name === 'execute_tool fs_read_text_file');
    const ran = spans.find((s) => s.service === 'cleveragents' && s.name === 'execute_tool fs_read_text_file');
    expect(asked?.attributes['cleveragents.tool.runs_on']).toBe('client');
    expect(ran?.attributes['gen_ai.tool.call.id']).toBe(asked?.attributes['gen_ai.tool.call.id']);
    expect(ancestry(ran!, spans).at(-1)).toBe('cleveragents send');

    // Nothing anyone wrote: not the prompt, the file's path or content, nor the command's line.
    const recorded = JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events]));
    for (const secret of ['Uppercase', file, 'hello notes', 'HELLO NOTES', 'wc -c']) {
      expect(recorded).not.toContain(secret);
    }

    // The server's log lines of those calls carry the trace.
    expect(server.log()).toContain(`"trace_id":"${spans[0].traceId}"`);
    // The same turns, counted at /metrics.
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/^cleveragents_turns_total\{[^}]*outcome="completed"[^}]*\} \d+$/m);
    expect(metrics).toMatch(/^cleveragents_model_tokens_total\{[^}]*direction="input"[^}]*\} \d+$/m);
  }, 120_000);

  it('over --local, the server the CLI starts joins the trace through the requests’ `_meta`', async () => {
    const local = await createEmbeddedTestDatabase();
    try {
      const { dir, file } = await scenarioWorkspace(home.dir, 'local');
      const run = await cli(
        [
          '--local',
          '--data-dir',
          local.env.CLEVERAGENTS_DATA_DIR,
          '--trace',
          'send',
          '--workspace',
          dir,
          '--approve',
          'all',
          '--allow-writes',
          '--allow-commands',
          `Uppercase ${file}`,
        ],
        // The local server inherits the CLI's environment: the model's settings go on the CLI.
        { ...receiver.env(), ...scenarioServerEnv(model) },
      );
      const spans = await traceOf(
        run,
        (all) =>
          all.some((s) => s.name === 'cleveragents send') &&
          all.some((s) => s.name.startsWith('invoke_agent') && s.attributes['cleveragents.turn.state'] === 'completed'),
      );
      const index = byId(spans);
      const serverCalls = spans.filter((s) => s.service === 'cleveragents-server' && s.kind === SERVER);
      expect(serverCalls.length).toBeGreaterThanOrEqual(2);
      for (const call of serverCalls) {
        expect(call.attributes['cleveragents.transport']).toBe('stdio');
        expect(index.get(call.parentSpanId ?? '')?.service).toBe('cleveragents');
      }
      expect(spans.some((s) => s.service === 'cleveragents-server' && s.name.startsWith('chat '))).toBe(true);
    } finally {
      await local.cleanup();
    }
  }, 120_000);

  it('continues into a LangGraph run: the LangGraph API server receives the trace', async () => {
    const server = await startServer({
      CLEVERAGENTS_ACTOR_BACKEND: 'langgraph',
      CLEVERAGENTS_LANGGRAPH_URL: langgraph.url,
      ...receiver.env(),
    });
    const run = await cli(['--server', server.baseUrl, '--trace', 'send', '--no-tools', 'hello graph'], receiver.env());
    const spans = await traceOf(run, (all) =>
      all.some((s) => s.name.startsWith('invoke_agent') && s.kind === CLIENT && s.endTimeUnixNano !== '0'),
    );
    const remoteRun = spans.find((s) => s.name.startsWith('invoke_agent') && s.kind === CLIENT)!;
    expect(ancestry(remoteRun, spans)).toEqual(expect.arrayContaining(['invoke_agent default', 'cleveragents send']));
    const seen = (await langgraph.tracedRequests()).filter((r) => r.traceparent?.includes(remoteRun.traceId));
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.some((r) => r.method === 'POST')).toBe(true);
  }, 120_000);

  it('continues into an external A2A agent: the agent sees the traceparent', async () => {
    const server = await startServer({
      ...scenarioServerEnv(model),
      CLEVERAGENTS_MODEL_ALLOWED_HOSTS: `127.0.0.1:${agent.port},*`,
      ...receiver.env(),
    });
    const created = await fetch(`${server.baseUrl}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: '_cleveragents/registry/create',
        params: { namespace: 'default', kind: 'actor', name: 'afar', spec: { a2a: { url: agent.url } } },
      }),
    });
    expect(((await created.json()) as { error?: unknown }).error).toBeUndefined();
    agentTraceparents.length = 0;
    const run = await cli(
      ['--server', server.baseUrl, '--trace', 'send', '--actor', 'afar', '--no-tools', 'hello agent'],
      receiver.env(),
    );
    const spans = await traceOf(run, (all) => all.some((s) => s.name === 'a2a.SendStreamingMessage'));
    const outbound = spans.find((s) => s.name === 'a2a.SendStreamingMessage')!;
    expect(outbound.kind).toBe(CLIENT);
    expect(ancestry(outbound, spans)).toEqual(expect.arrayContaining(['invoke_agent afar', 'cleveragents send']));
    expect(agentTraceparents).toContain(`00-${outbound.traceId}-${outbound.spanId}-01`);
  }, 120_000);

  it('sends nothing when tracing is off on both sides, even with an endpoint set', async () => {
    // A receiver of its own: the servers of the cases above still push their metrics to theirs.
    const quiet = await startOtlpReceiver();
    const off = { ...quiet.env(), OTEL_SDK_DISABLED: 'true' };
    const server = await startServer({ ...scenarioServerEnv(model), ...off });
    const { run } = await sendScenario(server, 'untraced', [], off);
    expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
    expect(run.stderr).not.toMatch(TRACE_LINE);
    server.process.kill('SIGTERM');
    await server.exited;
    expect(quiet.requests()).toBe(0);
    await quiet.close();
  }, 120_000);
});
