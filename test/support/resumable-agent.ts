/**
 * A scripted A2A peer that speaks the resumable-stream contract over real HTTP (docs/client.md "Streams
 * survive drops"): its card declares `resumableStreams`, every event carries its sequence number (SSE
 * `id:` and `metadata["cleveragents/sequence"]`), SubscribeToTask resumes after `lastSequence` (or
 * `Last-Event-ID`) or starts with a snapshot. One task, whose events are a fixed log; each connection
 * follows a leg of the test's script: how many events it sends, how it ends, what it tampers with.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { AgentCard, StreamResponse, Task, TaskState, type Artifact } from '@a2a-js/sdk';
import { EXTENSION_URI } from '../../packages/contract/src/index.js';
import { closeServer, listen, sdkAgentCard, text } from './a2a-test-agent.js';

export const TASK_ID = 'task-resumable-1';
export const CONTEXT_ID = 'ctx-resumable-1';
const SEQUENCE_KEY = 'cleveragents/sequence';

/** One connection of the script. Defaults: every event left, then the stream ends. */
export interface Leg {
  /** How many events this connection sends before it ends. */
  count?: number;
  /** How it ends: closed, cut (the socket destroyed), or with the last event SERVER_SHUTTING_DOWN. */
  end?: 'close' | 'cut' | 'shutdown';
  /** Answers with an error instead of a stream. */
  refuse?: 'expired' | 'handover';
  /** Rewrites an event as sent: its sequence in the metadata and its SSE id (a hostile server). */
  tamper?: (wire: { sequence: unknown; sseId: string | undefined }) => { sequence: unknown; sseId: string | undefined };
}

/** What a connection asked for. */
export interface Connection {
  method: string;
  lastSequence?: unknown;
  lastEventId?: string;
}

const status = (state: TaskState, at: number) => ({ state, message: undefined, timestamp: new Date(at).toISOString() });

const statusUpdate = (state: TaskState, at: number): StreamResponse => ({
  payload: {
    $case: 'statusUpdate',
    value: { taskId: TASK_ID, contextId: CONTEXT_ID, status: status(state, at), metadata: undefined },
  },
});

const answerChunk = (value: string, append: boolean, lastChunk = false): StreamResponse => ({
  payload: {
    $case: 'artifactUpdate',
    value: {
      taskId: TASK_ID,
      contextId: CONTEXT_ID,
      artifact: {
        artifactId: 'answer',
        name: 'answer',
        description: '',
        parts: [text(value)],
        metadata: undefined,
        extensions: [],
      },
      append,
      lastChunk,
      metadata: undefined,
    },
  },
});

/**
 * The log of a task whose answer streams `chunks`; after `restartAfter` chunks (a take-over) the answer
 * starts over (`append: false`) with `restart` chunks; then it is sent whole and the task completes.
 */
export function answerLog(chunks: string[], restart?: { after: number; chunks: string[] }): StreamResponse[] {
  const log: StreamResponse[] = [statusUpdate(TaskState.TASK_STATE_WORKING, 1000)];
  const first = restart ? chunks.slice(0, restart.after) : chunks;
  first.forEach((c, i) => log.push(answerChunk(c, i > 0)));
  const final = restart ? restart.chunks : chunks;
  if (restart) restart.chunks.forEach((c, i) => log.push(answerChunk(c, i > 0)));
  log.push(answerChunk(final.join(''), false, true));
  log.push(statusUpdate(TaskState.TASK_STATE_COMPLETED, 2000));
  return log;
}

/** The task as it stands after the first `count` events of `log`. */
function snapshotAfter(log: StreamResponse[], count: number): Task {
  let state = TaskState.TASK_STATE_SUBMITTED;
  let at = 0;
  const artifacts = new Map<string, Artifact>();
  for (const event of log.slice(0, count)) {
    const p = event.payload;
    if (p?.$case === 'statusUpdate') {
      state = p.value.status!.state;
      at = Date.parse(String(p.value.status!.timestamp));
    }
    if (p?.$case === 'artifactUpdate') {
      const { artifact, append } = p.value;
      const had = artifacts.get(artifact!.artifactId);
      artifacts.set(
        artifact!.artifactId,
        append && had ? { ...had, parts: [...had.parts, ...artifact!.parts] } : { ...artifact! },
      );
    }
  }
  return {
    id: TASK_ID,
    contextId: CONTEXT_ID,
    status: status(state, at),
    artifacts: [...artifacts.values()],
    history: [],
    metadata: undefined,
  };
}

function errorInfo(reason: string, metadata: Record<string, string>) {
  return [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'cleveragents', metadata }];
}

export interface ResumableAgent {
  url: string;
  /** Every connection, in order. */
  connections: Connection[];
  /** Plays `legs` from the next connection on, from its first leg. */
  play(legs: Leg[]): void;
  close(): Promise<void>;
}

/**
 * Starts the peer. `log`: the task's events after its first (the task, sequence 1); `legs`: one per
 * connection in order (SendStreamingMessage first), the last one repeated; `resumable: false` leaves
 * `resumableStreams` off the card (and the numbers off the events).
 */
export async function startResumableAgent(options: {
  log: StreamResponse[];
  legs: Leg[];
  resumable?: boolean;
}): Promise<ResumableAgent> {
  const resumable = options.resumable ?? true;
  /** The events with their sequence numbers: the task first. */
  const log: StreamResponse[] = [{ payload: { $case: 'task', value: snapshotAfter([], 0) } }, ...options.log];
  const connections: Connection[] = [];
  let legs = options.legs;
  /** Connections since `legs` were set. */
  let played = 0;
  /** How far the task got: the highest sequence number any connection sent. */
  let progress = 0;
  let url = '';

  const wire = (event: StreamResponse, sequence: number, leg: Leg): { json: unknown; sseId?: string } => {
    const sent = leg.tamper ? leg.tamper({ sequence, sseId: String(sequence) }) : { sequence, sseId: String(sequence) };
    const json = StreamResponse.toJSON(event) as Record<string, Record<string, unknown>>;
    if (!resumable) return { json };
    const [kind] = Object.keys(json);
    json[kind].metadata = sent.sequence === undefined ? undefined : { [SEQUENCE_KEY]: sent.sequence };
    return { json, sseId: sent.sseId };
  };

  /** Streams the events after sequence `after`; with `snapshot`, the task as it stood at `after` first. */
  const stream = (
    req: IncomingMessage,
    res: ServerResponse,
    id: unknown,
    after: number,
    snapshot: boolean,
    leg: Leg,
  ) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const events: [StreamResponse, number][] = [];
    if (snapshot) events.push([{ payload: { $case: 'task', value: snapshotAfter(log.slice(1), after - 1) } }, after]);
    for (let n = after + 1; n <= log.length; n++) events.push([log[n - 1], n]);
    const sent = events.slice(0, leg.count ?? events.length);
    for (const [event, n] of sent) {
      const { json, sseId } = wire(event, n, leg);
      progress = Math.max(progress, n);
      res.write(
        `${sseId !== undefined ? `id: ${sseId}\n` : ''}data: ${JSON.stringify({ jsonrpc: '2.0', id, result: json })}\n\n`,
      );
    }
    if (leg.end === 'cut') {
      // Written, then the connection dies: the client reads what came before the cut.
      res.write(': cut\n\n', () => req.socket.destroy());
      return;
    }
    if (leg.end === 'shutdown') {
      const error = {
        code: -32603,
        message: 'The server is shutting down; subscribe to the task again to continue',
        data: errorInfo('SERVER_SHUTTING_DOWN', { retryable: 'true' }),
      };
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, error })}\n\n`);
    }
    res.end();
  };

  const answer = (res: ServerResponse, body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
      const card = sdkAgentCard(url, { name: 'Resumable peer', description: 'speaks the resumable-stream contract' });
      card.capabilities!.extensions = [
        {
          uri: EXTENSION_URI,
          description: '',
          required: false,
          params: resumable
            ? { resumableStreams: { param: 'lastSequence', header: 'Last-Event-ID', metadataKey: SEQUENCE_KEY } }
            : {},
        },
      ];
      return answer(res, AgentCard.toJSON(card));
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rpc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: unknown;
        method: string;
        params?: { lastSequence?: unknown };
      };
      const lastEventId = req.headers['last-event-id'];
      if (rpc.method === 'GetTask') {
        return answer(res, {
          jsonrpc: '2.0',
          id: rpc.id,
          result: Task.toJSON(snapshotAfter(log.slice(1), progress - 1)),
        });
      }
      if (rpc.method !== 'SendStreamingMessage' && rpc.method !== 'SubscribeToTask') {
        return answer(res, { jsonrpc: '2.0', id: rpc.id, error: { code: -32601, message: `no ${rpc.method} here` } });
      }
      const connection: Connection = {
        method: rpc.method,
        ...(rpc.params?.lastSequence !== undefined ? { lastSequence: rpc.params.lastSequence } : {}),
        ...(typeof lastEventId === 'string' ? { lastEventId } : {}),
      };
      connections.push(connection);
      played++;
      const leg = legs[Math.min(played, legs.length) - 1];
      if (leg.refuse === 'expired') {
        const error = {
          code: -32001,
          message: 'The events after that sequence number are no longer kept',
          data: errorInfo('EVENTS_EXPIRED', {
            taskId: TASK_ID,
            lastSequence: String(rpc.params?.lastSequence),
            oldestSequence: String(progress),
          }),
        };
        return answer(res, { jsonrpc: '2.0', id: rpc.id, error });
      }
      if (leg.refuse === 'handover') {
        const error = {
          code: -32010,
          message: 'The task is being taken over by another replica',
          data: errorInfo('TASK_HANDOVER_PENDING', { retryable: 'true', taskId: TASK_ID }),
        };
        return answer(res, { jsonrpc: '2.0', id: rpc.id, error });
      }
      if (rpc.method === 'SendStreamingMessage') return stream(req, res, rpc.id, 0, false, leg);
      const after = typeof rpc.params?.lastSequence === 'number' ? rpc.params.lastSequence : undefined;
      if (after !== undefined) return stream(req, res, rpc.id, after, false, leg);
      // A snapshot of the task as far as it got, then the events after it.
      return stream(req, res, rpc.id, Math.max(progress, 1), true, leg);
    });
  });
  const port = await listen(server);
  url = `http://127.0.0.1:${port}`;
  return {
    url,
    connections,
    play: (next) => {
      legs = next;
      played = 0;
    },
    close: () => closeServer(server),
  };
}
