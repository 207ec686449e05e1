import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express, { type RequestHandler } from 'express';
import { TaskState } from '@a2a-js/sdk';
import { connect } from '../../packages/client/src/node.js';
import {
  SCENARIO_TEXT,
  SUPERVISED_READS,
  clientScenarioReply,
  scenarioServerEnv,
  scenarioWorkspace,
  upperPath,
} from '../support/client-scenario.js';
import { ndjson, runCli, shown, type CliRun } from '../support/cli.js';
import { CLI_BIN } from '../support/terminal.js';
import { cliRig, type CliRig } from '../support/cli-rig.js';
import { sdkAgentCard, startSdkAgent, taskEvents, text, type SdkAgent } from '../support/a2a-test-agent.js';
import { ATTACK_MARKERS, ERROR_TASK, startHostileAgent, type HostileAgent } from '../support/hostile-agent.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { freePort } from '../support/server.js';
import { DIST_MAIN } from '../support/stdio-client.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * `cleveragents --trace`: the built CLI in a child process exports its spans (OTLP http/json) to a receiver in
 * this process. `send` runs the client-side scenario (read a file, write <file>.upper, run wc) against a real
 * server over HTTP and against its own local server over stdio; a recording A2A agent shows the traceparent
 * the CLI sends; a hostile agent's errors stay out of the spans; with nothing asking, nothing is exported and
 * the SDK is not even loaded.
 */

const INTERNAL = 1;
const CLIENT = 3;
const TRACE_LINE = /^trace ([0-9a-f]{32})$/m;

describe('cleveragents --trace', () => {
  let rig: CliRig;
  let receiver: OtlpReceiver;
  let dataDir: string;
  let recording: SdkAgent;
  let hostileAgent: HostileAgent;
  let silent: SdkAgent;
  /** Resolved when the silent agent has been asked (and never answers). */
  let asked: () => void = () => undefined;
  const traceparents: string[] = [];

  const record: RequestHandler = (req, _res, next) => {
    const header = req.headers.traceparent;
    if (typeof header === 'string') traceparents.push(header);
    next();
  };

  beforeAll(async () => {
    rig = await cliRig(clientScenarioReply(), scenarioServerEnv);
    receiver = await startOtlpReceiver();
    const client = await connect({ server: rig.server.baseUrl });
    try {
      await client.registry.create(SUPERVISED_READS);
    } finally {
      await client.close();
    }
    dataDir = rig.localDb.env.CLEVERAGENTS_DATA_DIR!;
    const local = await connect({ local: { dataDir, env: rig.modelEnv, serverEntry: DIST_MAIN } });
    try {
      await local.registry.create(SUPERVISED_READS);
    } finally {
      await local.close();
    }
    recording = await startSdkAgent({
      card: (url) => sdkAgentCard(url, { name: 'Recording agent', description: 'records traceparent' }),
      executor: {
        execute: (context, bus) => {
          const events = taskEvents(context, bus);
          events.open();
          events.artifact('answer', 'answer', [text('ok')]);
          events.status(TaskState.TASK_STATE_COMPLETED);
          bus.finished();
          return Promise.resolve();
        },
        cancelTask: () => Promise.resolve(),
      },
      before: [express.json(), record],
    });
    hostileAgent = await startHostileAgent();
    silent = await startSdkAgent({
      card: (url) => sdkAgentCard(url, { name: 'Silent agent', description: 'never answers' }),
      executor: { execute: () => Promise.resolve(), cancelTask: () => Promise.resolve() },
      before: [() => asked()],
    });
  }, 120_000);

  afterAll(async () => {
    await ifAssigned(silent)?.close();
    await ifAssigned(hostileAgent)?.close();
    await ifAssigned(recording)?.close();
    await ifAssigned(receiver)?.close();
    await ifAssigned(rig)?.close();
  });

  const cli = (args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> =>
    runCli(args, { home: rig.home, env: { ...receiver.env(), ...env } });

  /** The spans of the trace `run` printed the id of, once its root span has arrived. */
  async function traceOf(run: CliRun, root: string): Promise<ReceivedSpan[]> {
    const traceId = TRACE_LINE.exec(run.stderr)?.[1];
    expect({ traceId, stderr: run.stderr }).toEqual({ traceId: expect.any(String), stderr: run.stderr });
    const spans = await receiver.waitForSpans((all) => all.some((s) => s.traceId === traceId && s.name === root));
    return spans.filter((s) => s.traceId === traceId);
  }

  const transports = [
    { name: 'http', mode: 'server', args: () => ['--server', rig.server.baseUrl], env: () => ({}) },
    { name: 'stdio', mode: 'local', args: () => ['--local', '--data-dir', dataDir], env: () => rig.modelEnv },
  ];

  describe.each(transports)('send over $name', (transport) => {
    it('exports the command, its requests and its tool calls as one trace, with no path, content or command line', async () => {
      const { dir, file } = await scenarioWorkspace(rig.home.dir, `trace-${transport.name}`);
      const run = await cli(
        [
          ...transport.args(),
          '--trace',
          'send',
          '--profile',
          'supervised-reads',
          '--workspace',
          dir,
          '--json',
          '--approve',
          'all',
          '--allow-writes',
          '--allow-commands',
          `Uppercase ${file}`,
        ],
        transport.env(),
      );
      expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
      expect(ndjson(run.stdout).at(-1)!.result.state).toBe('completed');
      // One line at the end of stderr says the trace id; stdout stays the command's.
      expect(run.stderr.trimEnd().split('\n').at(-1)).toMatch(TRACE_LINE);
      const spans = await traceOf(run, 'cleveragents send');
      const mine = spans.filter((s) => s.service === 'cleveragents');
      const root = mine.find((s) => s.name === 'cleveragents send')!;
      expect(root).toMatchObject({ kind: INTERNAL, parentSpanId: undefined });
      expect(root.attributes).toEqual({
        'cleveragents.command': 'send',
        'cleveragents.mode': transport.mode,
        'process.exit.code': 0,
      });
      const requests = mine.filter((s) => s.kind === CLIENT);
      expect(requests.map((s) => s.name)).toEqual(expect.arrayContaining(['SendStreamingMessage']));
      for (const request of requests) {
        expect(request.parentSpanId).toBe(root.spanId);
        expect(request.attributes).toMatchObject({
          'rpc.system': 'jsonrpc',
          'rpc.method': request.name,
          'cleveragents.transport': transport.name,
        });
      }
      const tools = mine.filter((s) => s.name.startsWith('execute_tool '));
      expect(tools.map((s) => s.name)).toEqual(
        expect.arrayContaining([
          'execute_tool fs_read_text_file',
          'execute_tool fs_write_text_file',
          'execute_tool terminal_create',
        ]),
      );
      for (const tool of tools) {
        expect(tool.attributes).toMatchObject({
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': tool.name.slice('execute_tool '.length),
          'gen_ai.tool.call.id': expect.any(String),
        });
      }
      const byName = (name: string) => tools.find((s) => s.name === `execute_tool ${name}`)!.attributes;
      expect(byName('fs_read_text_file')['cleveragents.tool.decision']).toBe('allowed');
      expect(byName('fs_write_text_file')['cleveragents.tool.decision']).toBe('allowed');
      expect(['allowed', 'sandboxed']).toContain(byName('terminal_create')['cleveragents.tool.decision']);
      expect(tools.find((s) => s.name === 'execute_tool terminal_wait_for_exit')?.attributes).toMatchObject({
        'process.exit.code': 0,
      });
      // The workspace, the file, its content and the command line stay on this machine.
      const exported = JSON.stringify(mine);
      for (const secret of [dir, file, upperPath(file), SCENARIO_TEXT, SCENARIO_TEXT.toUpperCase(), 'wc -c']) {
        expect({ secret, found: exported.includes(secret) }).toEqual({ secret, found: false });
      }
    });
  });

  it('sends the trace context to the agent: the request span is the parent of what the agent does', async () => {
    traceparents.length = 0;
    const run = await cli(['--agent', recording.url, '--trace', 'send', '--no-tools', 'hello']);
    expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
    const spans = await traceOf(run, 'cleveragents send');
    const root = spans.find((s) => s.name === 'cleveragents send')!;
    expect(root.attributes['cleveragents.mode']).toBe('agent');
    const requests = spans.filter((s) => s.kind === CLIENT);
    expect(requests.length).toBeGreaterThan(0);
    const sent = traceparents.map((h) => /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(h)?.slice(1));
    expect(sent.map(String).sort()).toEqual(requests.map((s) => String([root.traceId, s.spanId])).sort());
  });

  it("keeps a hostile agent's error messages out of the spans", async () => {
    const run = await cli(['--agent', hostileAgent.url, '--trace', 'tasks', 'get', ERROR_TASK]);
    expect(run.code).not.toBe(0);
    const spans = await traceOf(run, 'cleveragents tasks get');
    const request = spans.find((s) => s.name === 'GetTask')!;
    expect(request.status.code).toBe(2);
    expect(typeof request.attributes['rpc.jsonrpc.error_code']).toBe('number');
    expect(spans.find((s) => s.name === 'cleveragents tasks get')!.attributes['process.exit.code']).toBe(run.code);
    const exported = JSON.stringify(spans);
    expect(exported).not.toContain('pwned');
    for (const marker of Object.values(ATTACK_MARKERS)) expect(exported).not.toContain(marker);
  });

  it('with content capture, records their message bounded and without controls', async () => {
    const run = await cli(['--agent', hostileAgent.url, '--trace', 'tasks', 'get', ERROR_TASK], {
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    });
    const spans = await traceOf(run, 'cleveragents tasks get');
    const message = spans.find((s) => s.name === 'GetTask')!.attributes['rpc.jsonrpc.error_message'];
    expect(message).toEqual(expect.stringContaining('pwned'));
    expect((message as string).length).toBeLessThanOrEqual(257);
    expect(message).not.toMatch(/[\u0000-\u001f\u007f\u202e]/);
  });

  describe('when nothing asks for it', () => {
    /** The packages a run loads, by a module-resolution hook in the child. */
    async function packagesLoaded(args: string[], env: Record<string, string | undefined>): Promise<string[]> {
      const hooks = join(rig.home.dir, 'trace-hooks.mjs');
      writeFileSync(
        hooks,
        `export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const m = resolved.url.match(/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//);
  if (m) process.stderr.write('loaded-package ' + m[1] + '\\n');
  return resolved;
}
`,
      );
      const register = join(rig.home.dir, 'trace-register.mjs');
      writeFileSync(
        register,
        `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
      );
      const run = await runCli(args, {
        home: rig.home,
        env: { ...env, NODE_OPTIONS: `--import ${pathToFileURL(register).href}` },
      });
      expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
      return [...new Set([...run.stderr.matchAll(/^loaded-package (\S+)$/gm)].map((m) => m[1]))];
    }

    it('exports nothing and loads no OpenTelemetry SDK; --trace loads it', async () => {
      receiver.reset();
      const args = ['--agent', recording.url, 'send', '--no-tools', 'hello'];
      const off = await packagesLoaded(args, {});
      expect(off).toContain('@a2a-js/sdk');
      expect(off.filter((name) => name.startsWith('@opentelemetry/sdk'))).toEqual([]);
      const on = await packagesLoaded(['--trace', ...args], receiver.env());
      expect(on).toContain('@opentelemetry/sdk-node');
      await receiver.waitForSpans((all) => all.length > 0);
    });

    it('OTEL_SDK_DISABLED=true wins over --trace and the endpoint: not one export request', async () => {
      receiver.reset();
      const run = await cli(['--agent', recording.url, '--trace', 'send', '--no-tools', 'hello'], {
        OTEL_SDK_DISABLED: 'true',
      });
      expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
      expect(run.stderr).not.toMatch(TRACE_LINE);
      // An exported run's spans arrive with its exit (flushed first): a run after it proves the receiver listens.
      const control = await cli(['--agent', recording.url, '--trace', 'send', '--no-tools', 'hello']);
      await traceOf(control, 'cleveragents send');
      expect(receiver.spans().every((s) => s.traceId === TRACE_LINE.exec(control.stderr)?.[1])).toBe(true);
    });
  });

  it('Ctrl-C where the command does not handle it: the trace is exported, then the signal ends the process', async () => {
    const waiting = new Promise<void>((resolve) => (asked = resolve));
    const child = spawn(process.execPath, [CLI_BIN, '--agent', silent.url, '--trace', 'tasks', 'get', 'any'], {
      env: { PATH: process.env.PATH ?? '', ...rig.home.env, ...receiver.env() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const ended = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('close', (_code, signal) => resolve(signal)),
    );
    await waiting;
    child.kill('SIGINT');
    expect(await ended).toBe('SIGINT');
    const spans = await traceOf({ code: null, signal: 'SIGINT', stdout: '', stderr, ms: 0 }, 'cleveragents tasks get');
    expect(spans.find((s) => s.name === 'cleveragents tasks get')!.attributes['process.exit.code']).toBe(130);
  });

  describe('settings', () => {
    it('refuses a bad endpoint, naming the setting', async () => {
      const run = await cli(['--agent', recording.url, '--trace', 'send', 'hello'], {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost 4318',
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('OTEL_EXPORTER_OTLP_ENDPOINT is not an http(s) URL');
    });

    it('refuses the console exporter, which would mix spans into the output', async () => {
      const run = await cli(['--agent', recording.url, 'send', 'hello'], { OTEL_TRACES_EXPORTER: 'console' });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('OTEL_TRACES_EXPORTER names "console"');
    });

    it('an unreachable collector: the command ends as it would, with one short warning', async () => {
      const port = await freePort();
      const run = await cli(['--agent', recording.url, '--trace', '--json', 'send', '--no-tools', 'hello'], {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      });
      expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
      expect(ndjson(run.stdout).at(-1)!.result.state).toBe('completed');
      expect(run.stderr.match(/trace export/g)?.length ?? 0).toBeLessThanOrEqual(1);
      expect(run.stderr).toMatch(TRACE_LINE);
    });
  });
});
