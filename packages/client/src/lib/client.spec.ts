import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import { EXTENSION_URI, METHODS } from '@cleveragents/contract';
import { closeServer, listen, sdkAgentCard } from '../../../../test/support/a2a-test-agent.js';
import { connect, type CleverAgentsClient } from './client.js';
import { CleverAgentsError } from './errors.js';

/*
 * `_cleveragents/*` results against a hostile server (a real HTTP server in process, whose answers the test
 * writes): a result the contract has a schema for is decoded with it, and one that does not decode is refused.
 */

const answers = new Map<string, unknown>();
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json' });
    if (request.method === 'GET') {
      const card = sdkAgentCard(url, { name: 'rogue', description: 'a hostile server' });
      const extension = { uri: EXTENSION_URI, description: '', required: false, params: {} };
      response.end(JSON.stringify({ ...card, capabilities: { ...card.capabilities, extensions: [extension] } }));
      return;
    }
    const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string };
    response.end(answers.has(call.method) ? JSON.stringify(answers.get(call.method)) : 'not json-rpc');
  });
});
let url = '';
let client: CleverAgentsClient;

beforeAll(async () => {
  url = `http://127.0.0.1:${await listen(server)}`;
  client = await connect({ server: url });
});

afterAll(async () => {
  await client.close();
  await closeServer(server);
});

const namespace = {
  namespace: 'acme',
  parent: null,
  displayName: 'Acme',
  description: '',
  revision: 1,
  createdAt: '2030-01-31T00:00:00.000Z',
  updatedAt: '2030-01-31T00:00:00.000Z',
  createdBy: 'local:alice',
};
const answering = (method: string, result: unknown) =>
  answers.set(method, { jsonrpc: '2.0', id: 1, ...(result === undefined ? {} : { result }) });

/** What a call threw: its class, message, field violations and method; or what it returned. */
async function outcome(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return { returned: await call() };
  } catch (err) {
    if (!(err instanceof CleverAgentsError)) return { threw: String(err) };
    const { code, message, fieldViolations, method, hint } = err;
    return { code, message, fieldViolations, method, hint };
  }
}

describe('extension results are decoded with the contract', () => {
  it('a well-formed result comes back as the contract has it: keys it does not name dropped', async () => {
    answering(METHODS.namespace.get, { ...namespace, internalNote: 'x', role: 'owner' });
    expect(await outcome(() => client.namespaces.get({ namespace: 'acme' }))).toEqual({ returned: namespace });
  });

  it('a result that does not decode is refused with an error naming the method and the first field', async () => {
    answering(METHODS.namespace.get, { ...namespace, revision: 'latest', createdAt: 'yesterday' });
    expect(await outcome(() => client.namespaces.get({ namespace: 'acme' }))).toEqual({
      code: -32603,
      message:
        "_cleveragents/namespace/get: the server's result does not follow the contract (result.revision: Invalid input: expected number, received string); it was not used",
      fieldViolations: [
        { field: 'result.revision', description: 'Invalid input: expected number, received string' },
        { field: 'result.createdAt', description: 'Invalid ISO datetime' },
      ],
      method: METHODS.namespace.get,
      hint: expect.stringContaining('another version of the contract'),
    });
  });

  it('in a page: the item and field are named', async () => {
    answering(METHODS.namespace.list, {
      items: [namespace, { ...namespace, parent: 7 }],
      nextPageToken: '',
      totalSize: 2,
    });
    expect(await outcome(() => client.namespaces.list())).toMatchObject({
      fieldViolations: [
        { field: 'result.items[1].parent', description: 'Invalid input: expected string, received number' },
      ],
    });
  });

  it('no result at all is refused too', async () => {
    answering(METHODS.namespace.delete, undefined);
    expect(await outcome(() => client.namespaces.delete({ namespace: 'acme' }))).toMatchObject({
      code: -32603,
      fieldViolations: [{ field: 'result' }],
    });
  });

  it('a method the contract has no schema for is handed on as it came', async () => {
    answering('_cleveragents/future/thing', { anything: [1, 2] });
    expect(await outcome(() => client.call('_cleveragents/future/thing'))).toEqual({ returned: { anything: [1, 2] } });
  });

  it('an answer that is not JSON-RPC (an error without its code) is said so', async () => {
    answers.set(METHODS.namespace.get, { jsonrpc: '2.0', id: 1, error: { message: 'no code' } });
    expect(await outcome(() => client.namespaces.get({ namespace: 'acme' }))).toEqual({
      threw: `Error: ${METHODS.namespace.get}: the server answered HTTP 200 with a body that is not JSON-RPC`,
    });
    answers.set(METHODS.namespace.get, null);
    expect(await outcome(() => client.namespaces.get({ namespace: 'acme' }))).toEqual({
      threw: `Error: ${METHODS.namespace.get}: the server answered HTTP 200 with a body that is not JSON-RPC`,
    });
  });
});
