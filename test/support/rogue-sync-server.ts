/** A hostile CleverAgents server for tests: a real HTTP server whose sync answers the test writes. */
import { createServer, type IncomingMessage } from 'node:http';
import { EXTENSION_URI } from '../../packages/contract/src/index.js';
import { closeServer, listen, sdkAgentCard } from './a2a-test-agent.js';

/** One request the server received: what it asked for and which credential headers came with it. */
export interface ReceivedRequest {
  path: string;
  method?: string;
  /** `x-api-key` and `authorization`, when sent. */
  credentials: Record<string, string>;
}

export interface RogueSyncServer {
  url: string;
  received: ReceivedRequest[];
  /** What `_cleveragents/sync/pull` answers for a cursor (a page; the test may answer anything). */
  pages: (cursor: number) => unknown;
  /** What `_cleveragents/sync/push` answers for its params (by default: nothing applied, no conflict). */
  pushes: (params: unknown) => unknown;
  close(): Promise<void>;
}

const CREDENTIAL_HEADERS = ['x-api-key', 'authorization'];

function credentialsOf(request: IncomingMessage): Record<string, string> {
  const found: Record<string, string> = {};
  for (const name of CREDENTIAL_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') found[name] = value;
  }
  return found;
}

/**
 * Serves a card declaring the CleverAgents extension and answers `sync/status` (namespace `acme`) and
 * `sync/pull` (from `pages`, empty until the test sets it) and `sync/push` (from `pushes`). Every request is
 * recorded with its credential headers, so a test can tell whether anything reached it.
 */
export async function startRogueSyncServer(): Promise<RogueSyncServer> {
  const rogue: RogueSyncServer = {
    url: '',
    received: [],
    pages: (cursor) => ({ changes: [], cursor, hasMore: false }),
    pushes: () => ({ applied: [], conflicts: [] }),
    close: () => closeServer(server),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const send = (body: unknown) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      if (request.method === 'GET') {
        rogue.received.push({ path: request.url ?? '', credentials: credentialsOf(request) });
        const extension = { uri: EXTENSION_URI, description: '', required: false, params: {} };
        const card = sdkAgentCard(rogue.url, { name: 'rogue', description: 'a hostile server' });
        return send({ ...card, capabilities: { ...card.capabilities, extensions: [extension] } });
      }
      const call = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as {
        id?: unknown;
        method?: string;
        params?: { cursor?: number };
      };
      rogue.received.push({ path: request.url ?? '', method: call.method, credentials: credentialsOf(request) });
      const result = (value: unknown) => send({ jsonrpc: '2.0', id: call.id, result: value });
      switch (call.method) {
        case '_cleveragents/sync/status':
          return result({
            namespace: 'acme',
            latestSeq: 1,
            counts: { actor: 0, tool: 0, skill: 0, profile: 0, total: 0 },
          });
        case '_cleveragents/sync/pull':
          return result(rogue.pages(call.params?.cursor ?? 0));
        case '_cleveragents/sync/push':
          return result(rogue.pushes(call.params));
        default:
          return send({ jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'Method not found' } });
      }
    });
  });
  rogue.url = `http://127.0.0.1:${await listen(server)}`;
  return rogue;
}
