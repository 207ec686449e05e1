import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EXIT } from '../../packages/cli/src/exit-codes.js';
import { ANSI, expectExit, runCli } from '../support/cli.js';
import { cliRig, type CliRig } from '../support/cli-rig.js';
import { extensionCalls, rawCall } from '../support/server.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * `cleveragents approvals webhooks` (docs/client.md#approvals): the built CLI against a real server (embedded
 * database, the local backend on a scripted model that plans, so a task under `manual` waits at its plan gate)
 * and a real HTTP receiver on loopback, admitted by CLEVERAGENTS_PUSH_ALLOWED_HOSTS as the task push tests do.
 */

type Json = Record<string, any>;

describe('cleveragents approvals webhooks against a CleverAgents server', () => {
  let rig: CliRig;
  let receiver: http.Server;
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const { ok } = extensionCalls(() => rig.server);
  const cli = (args: string[]) => runCli(['--server', rig.server.baseUrl, ...args], { home: rig.home });
  const hookUrl = () => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/approvals?token=hidden`;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    rig = await cliRig(
      (body) =>
        (body.messages as Json[]).some((m) => m.role === 'tool')
          ? { tokens: ['Done', '.'] }
          : {
              toolCalls: [
                {
                  id: 'plan-1',
                  name: 'update_plan',
                  arguments: JSON.stringify({
                    entries: [{ content: 'Read the notes', priority: 'high', status: 'pending' }],
                  }),
                },
              ],
            },
      (model) => ({
        CLEVERAGENTS_ACTOR_BACKEND: 'local',
        CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
        CLEVERAGENTS_MODEL: 'cli-rig',
        CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1',
      }),
    );
  }, 60000);

  afterAll(async () => {
    await ifAssigned(rig)?.close();
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('adds a webhook (its secret printed once, last), lists it by origin, posts a new approval there signed with that secret, removes it', async () => {
    const added = await cli(['approvals', 'webhooks', 'add', hookUrl()]);
    expectExit(added, EXIT.OK);
    const lines = added.stdout.trimEnd().split('\n');
    const secret = lines.at(-1)!.replace(ANSI, '');
    expect(secret).toMatch(/^whsec_\S+$/);
    const id = /^id: +(\S+)$/m.exec(added.stdout)?.[1];
    expect(id).toEqual(expect.any(String));
    expect(added.stdout).toMatch(/^origin: +http:\/\/127\.0\.0\.1:\d+$/m);
    // Neither the URL's path nor its query is shown: a chat tool's webhook URL is itself a credential.
    expect(added.stdout + added.stderr).not.toContain('token=hidden');
    expect(added.stderr).toContain('shown this once');
    expect(added.stderr).toContain(`approvals webhooks remove ${id}`);

    const listed = await cli(['approvals', 'webhooks']);
    expectExit(listed, EXIT.OK);
    expect(listed.stdout).toMatch(new RegExp(`^${id} +http://127\\.0\\.0\\.1:\\d+ +\\S+ +\\S+ +—$`, 'm'));

    // A task waits at its plan gate: its approval is posted, signed with the secret the CLI printed.
    const { sessionId } = await ok('session/create', { profile: 'manual' });
    const message = { messageId: `m-${sessionId}`, role: 'ROLE_USER', contextId: sessionId, parts: [{ text: 'go' }] };
    await rawCall(
      rig.server.endpoint,
      { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message } },
      { 'A2A-Version': '1.0' },
    );
    await until(() => received.length === 1, 'the approval to be posted', 15000);
    const [{ headers, body }] = received;
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]+)$/.exec(String(headers['x-cleveragents-signature']))!;
    expect(v1).toBe(createHmac('sha256', secret).update(`${t}.${body}`).digest('hex'));
    expect(JSON.parse(body)).toMatchObject({ type: 'cleveragents/approval-requested', approval: { sessionId } });

    await until(
      async () => /delivered \(1 attempt\)/.test((await cli(['approvals', 'webhooks'])).stdout),
      'the delivery to be listed',
      15000,
    );
    const removed = await cli(['approvals', 'webhooks', 'remove', id!]);
    expectExit(removed, EXIT.OK);
    expect(removed.stdout).toBe(`Removed approval webhook ${id} (${/origin: +(\S+)/.exec(added.stdout)![1]}).\n`);
    expect((await cli(['approvals', 'webhooks'])).stdout).toBe('No approval webhooks.\n');
    expect((await cli(['--json', 'approvals', 'webhooks'])).stdout).toBe('{"items":[]}\n');
  }, 90000);

  it('a URL the server refuses (a private address, not allowed) is said, naming url; nothing is added', async () => {
    const refused = await cli(['approvals', 'webhooks', 'add', 'http://10.1.2.3/hook']);
    expect(refused.code).not.toBe(EXIT.OK);
    expect(refused.stderr).toMatch(/url/);
    expect(refused.stdout).toBe('');
    expect((await cli(['approvals', 'webhooks'])).stdout).not.toContain('10.1.2.3');
    const unknown = await cli(['approvals', 'webhooks', 'remove', 'whk_nothing']);
    expect(unknown.code).not.toBe(EXIT.OK);
    expect(unknown.stderr).not.toBe('');
  }, 60000);
});
