import { mkdtemp, rm } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from '../../packages/client/src/node.js';
import { runTurn, type TurnOutcome } from '../../packages/client/src/conversation/turn.js';
import { GATE_REQUEST_KEY, type GateRequest } from '../../packages/contract/src/index.js';
import { ClientToolRunner } from '../../packages/cli/src/tools/index.js';
import { clientScenarioReply, scenarioServerEnv, scenarioWorkspace } from '../support/client-scenario.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { wireMessage } from '../support/orchestration.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { extensionCalls, fieldsOf, rawCall, startServer, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The gates a client asks its task to run under (message metadata `cleveragents/gates`), through the real
 * server (local backend, PostgreSQL) and the client's real tool runner: `ask` makes a gate stricter under
 * any profile; `allow` loosens it only as far as the profile lets a client (`clientMayAllow`), never
 * beyond; what was asked, granted and refused is in the audit log; a malformed request is -32602 naming
 * the field. The model plays test/support/client-scenario.ts: plan, read, write, `wc -c`, its follow-ups.
 */

const USAGE = { promptTokens: 10, completionTokens: 2 };

describe('gates a client asks for, within its profile (PostgreSQL)', () => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let root: string;
  const { ok } = extensionCalls(() => server);

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start(clientScenarioReply(USAGE));
    db = await createTestDatabase();
    server = await startServer(db, scenarioServerEnv(model));
    root = realpathSync(await mkdtemp(`${tmpdir()}/ca-client-gates-`));
    await ok('registry/create', {
      kind: 'profile',
      name: 'commands-on-request',
      spec: { gate: 'supervised', allowedTools: ['fs_read_text_file'], clientMayAllow: ['terminal_create'] },
    });
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** "Uppercase <file>" in a new session under `profile`, the request in its metadata; every gate approved. */
  async function play(
    profile: string,
    gates: GateRequest,
  ): Promise<{ outcome: TurnOutcome; gates: string[]; session: string }> {
    const { dir, file } = await scenarioWorkspace(root, `${profile}-${Object.keys(gates).join('-')}-${Date.now()}`);
    const client = await connect({ server: server.baseUrl });
    const runner = new ClientToolRunner({
      workspace: dir,
      autoApproveWrites: true,
      autoApproveCommands: true,
      sandbox: 'off',
    });
    const asked: string[] = [];
    try {
      const session = String((await client.sessions.create({ profile })).sessionId);
      const outcome = await runTurn(
        (request) => client.stream(request),
        {
          text: `Uppercase ${file}`,
          contextId: session,
          capabilities: runner.capabilities(),
          metadata: { [GATE_REQUEST_KEY]: gates },
        },
        {
          decide: (request) => {
            asked.push(request.subject.kind === 'tool' ? request.subject.tool : request.subject.kind);
            return Promise.resolve({ decision: 'approve' });
          },
          runClientCalls: (request) => runner.runAll(request.requests),
        },
      );
      return { outcome, gates: asked, session };
    } finally {
      await runner.dispose();
      await client.close();
    }
  }

  /** The `session.gates` audit record of a session. */
  async function recorded(session: string): Promise<Record<string, unknown>[]> {
    const page = await ok('audit/list', { namespace: 'default', action: 'session.gates', pageSize: 100 });
    return (page.items as { target: string; actor: string; details: Record<string, unknown> }[])
      .filter((r) => r.target === `session/${session}`)
      .map((r) => ({ actor: r.actor, ...r.details, taskId: typeof r.details.taskId }));
  }

  it.each([
    {
      profile: 'guarded',
      request: { allow: ['fs_write_text_file'] },
      gates: ['plan'],
      record: { allowed: ['fs_write_text_file'], refused: [], asked: [] },
    },
    {
      profile: 'supervised',
      request: { allow: ['fs_write_text_file', 'terminal_create'] },
      gates: ['plan', 'fs_read_text_file', 'fs_write_text_file', 'terminal_create'],
      record: { allowed: [], refused: ['fs_write_text_file', 'terminal_create'], asked: [] },
    },
    {
      profile: 'manual',
      request: { allow: ['fs_read_text_file'] },
      gates: ['plan', 'fs_read_text_file', 'fs_write_text_file', 'terminal_create'],
      record: { allowed: [], refused: ['fs_read_text_file'], asked: [] },
    },
    {
      profile: 'commands-on-request',
      request: { allow: ['terminal_create', 'fs_write_text_file'] },
      gates: ['plan', 'fs_write_text_file'],
      record: { allowed: ['terminal_create'], refused: ['fs_write_text_file'], asked: [] },
    },
    {
      profile: 'autonomous',
      request: { ask: ['fs_write_text_file'] },
      gates: ['fs_write_text_file'],
      record: { allowed: [], refused: [], asked: ['fs_write_text_file'] },
    },
    {
      profile: 'guarded',
      request: { allow: ['fs_write_text_file'], ask: ['fs_read_text_file'] },
      gates: ['plan', 'fs_read_text_file'],
      record: { allowed: ['fs_write_text_file'], refused: [], asked: ['fs_read_text_file'] },
    },
  ])(
    'under $profile with $request: the gates are $gates, and the audit log says what was granted',
    async ({ profile, request, gates, record }) => {
      const played = await play(profile, request);
      expect({ gates: played.gates, state: played.outcome.state }).toEqual({ gates, state: 'completed' });
      expect(await recorded(played.session)).toEqual([
        { actor: 'anonymous', sessionId: played.session, owner: 'anonymous', taskId: 'string', profile, ...record },
      ]);
    },
    60000,
  );

  it('an empty request changes no gate, and is on record', async () => {
    const played = await play('guarded', {});
    expect(played.gates).toEqual(['plan', 'fs_write_text_file']);
    expect(await recorded(played.session)).toEqual([
      expect.objectContaining({ profile: 'guarded', allowed: [], refused: [], asked: [] }),
    ]);
  }, 60000);

  it.each([
    [{ allow: 'fs_write_text_file' }, 'message.metadata.cleveragents/gates.allow'],
    [{ allow: ['Not A Tool'] }, 'message.metadata.cleveragents/gates.allow[0]'],
    [{ ask: ['fs_read_text_file', 7] }, 'message.metadata.cleveragents/gates.ask[1]'],
    [{ loosen: true }, 'message.metadata.cleveragents/gates.loosen'],
    [{ allow: ['fs_write_text_file'], ask: ['fs_write_text_file'] }, 'message.metadata.cleveragents/gates.ask[0]'],
    ['all', 'message.metadata.cleveragents/gates'],
  ])('a malformed request %j is refused (-32602 naming %s); no session is made', async (gates, field) => {
    const before = await ok('session/list', {});
    const answer = await rawCall(
      server.endpoint,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: wireMessage('Uppercase /nowhere.txt', { metadata: { [GATE_REQUEST_KEY]: gates } }) },
      },
      { 'A2A-Version': '1.0' },
    );
    expect({ code: answer.json.error?.code, fields: fieldsOf(answer) }).toEqual({ code: -32602, fields: [field] });
    expect((await ok('session/list', {})).totalSize).toBe(before.totalSize);
  });
});
