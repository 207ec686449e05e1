import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { startServer, type TestServer } from '../support/server.js';
import { sseCall, type SseEvent } from '../support/sse.js';
import { ifAssigned } from '../support/assigned.js';
import { until } from '../support/wait.js';
import { DataSource } from 'typeorm';

/*
 * The wire of resumable streams (docs/protocol.md §10.1), on each database: every streamed event numbered, the
 * same number as its SSE id and in its metadata, over v1.0 and v0.3; SubscribeToTask and tasks/resubscribe
 * resuming after `lastSequence` or `Last-Event-ID`; what they refuse; a log trimmed to its latest events
 * refusing a resumption before them with EVENTS_EXPIRED; and the card declaring it all.
 */

const SEQUENCE_KEY = 'cleveragents/sequence';
/** Long enough for a task's log to pass the smallest per-task limit (100 events). */
const WORDS = Array.from({ length: 130 }, (_, i) => `t${i} `);

describe.each(databaseTargets())('resumable streams on the wire, $kind', (target) => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start({ tokens: WORDS, delayMs: 1 });
    db = await target.create();
    server = await startServer(db, {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'onprem-model',
      CLEVERAGENTS_EVENT_LOG_MAX_EVENTS_PER_TASK: '100',
      // The recovery sweep, which drops events past their age, once a second.
      CLEVERAGENTS_TASK_LEASE_SECONDS: '2',
    });
  }, 60_000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  async function read(body: unknown, headers: Record<string, string> = {}): Promise<SseEvent[]> {
    const events: SseEvent[] = [];
    for await (const event of sseCall(server.endpoint, body, headers)) events.push(event);
    return events;
  }

  const streaming = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'SendStreamingMessage',
    params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'go' }] } },
  });
  const subscribe = (taskId: string, extra: Record<string, unknown> = {}) => ({
    jsonrpc: '2.0',
    id: 2,
    method: 'SubscribeToTask',
    params: { id: taskId, ...extra },
  });

  function numberOf(event: SseEvent): unknown {
    const inner = Object.values(event.message.result ?? {})[0] as { metadata?: Record<string, unknown> } | undefined;
    // v0.3: the result is the event itself.
    const own = event.message.result?.metadata as Record<string, unknown> | undefined;
    return inner?.metadata?.[SEQUENCE_KEY] ?? own?.[SEQUENCE_KEY];
  }

  function reasonOf(event: SseEvent): string | undefined {
    return (event.message.error?.data?.[0] as { reason?: string } | undefined)?.reason;
  }

  it('numbers every event 1..n, as its SSE id and in its metadata; the card declares it', async () => {
    const events = await read(streaming(1));
    expect(events.length).toBeGreaterThan(100);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.map(numberOf)).toEqual(events.map((e) => e.id));
    const card = (await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json()) as {
      capabilities: { extensions: { params?: Record<string, unknown> }[] };
    };
    expect(card.capabilities.extensions[0].params?.resumableStreams).toEqual({
      param: 'lastSequence',
      header: 'Last-Event-ID',
      metadataKey: SEQUENCE_KEY,
    });
  });

  it('v0.3 message/stream and tasks/resubscribe number their events and resume as v1.0 does', async () => {
    const v03 = { 'a2a-version': '0.3' };
    const events = await read(
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'message/stream',
        params: {
          message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'go' }] },
        },
      },
      v03,
    );
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.map(numberOf)).toEqual(events.map((e) => e.id));
    const taskId = (events[0].message.result as { id: string }).id;
    // The last event of a long log still kept: the one before it is resumed after.
    const last = events.length;
    const resumed = await read(
      { jsonrpc: '2.0', id: 4, method: 'tasks/resubscribe', params: { id: taskId, lastSequence: last - 1 } },
      v03,
    );
    expect(resumed.map((e) => e.id)).toEqual([last]);
    expect((resumed[0].message.result as { status: { state: string } }).status.state).toBe('completed');
  });

  it('resumes after lastSequence or Last-Event-ID; refuses a number past the log, a bad header, and expired events', async () => {
    const events = await read(streaming(5));
    const taskId = (events[0].message.result!.task as { id: string }).id;
    const last = events.length;

    const after = await read(subscribe(taskId, { lastSequence: last - 2 }));
    expect(after.map((e) => e.id)).toEqual([last - 1, last]);
    // The param wins over the header.
    const both = await read(subscribe(taskId, { lastSequence: last - 1 }), { 'last-event-id': '3' });
    expect(both.map((e) => e.id)).toEqual([last]);
    const byHeader = await read(subscribe(taskId), { 'last-event-id': String(last - 1) });
    expect(byHeader.map((e) => e.id)).toEqual([last]);
    // All seen: nothing more, and the stream ends.
    expect(await read(subscribe(taskId, { lastSequence: last }))).toEqual([]);

    const past = await read(subscribe(taskId, { lastSequence: last + 1 }));
    expect(past.map((e) => [e.message.error?.code, reasonOf(e)])).toEqual([[-32602, 'INVALID_PARAMS']]);
    expect(JSON.stringify(past[0].message.error)).toContain('lastSequence');
    const negative = await read(subscribe(taskId, { lastSequence: -1 }));
    expect(negative.map((e) => e.message.error?.code)).toEqual([-32602]);
    const badHeader = await read(subscribe(taskId), { 'last-event-id': 'abc' });
    expect(badHeader.map((e) => e.message.error?.code)).toEqual([-32602]);
    expect(JSON.stringify(badHeader[0].message.error)).toContain('Last-Event-ID');

    // The log keeps this task's latest 100 events: the ones before are gone, and said to be.
    const expired = await read(subscribe(taskId, { lastSequence: 1 }));
    expect(expired.map((e) => [e.message.error?.code, reasonOf(e)])).toEqual([[-32001, 'EVENTS_EXPIRED']]);
    const metadata = (expired[0].message.error!.data![0] as { metadata: Record<string, string> }).metadata;
    expect(metadata).toEqual({ taskId, lastSequence: '1', oldestSequence: String(last - 100 + 1) });
    // Without a number: the task as it stands, as the SDK answers an ended task.
    const ended = await read(subscribe(taskId));
    expect(ended.map((e) => e.message.error?.code)).toEqual([-32004]);
  });

  it('drops events older than the retention period, and refuses a resumption before them', async () => {
    const events = await read(streaming(6));
    const taskId = (events[0].message.result!.task as { id: string }).id;
    // The five oldest events kept (the log keeps this task's latest 100) were written 200 hours ago, longer than
    // the 168 hours kept.
    const dataSource = server.app.get(DataSource);
    const oldest = async (): Promise<number> =>
      Number((await dataSource.query('SELECT min(seq) AS m FROM task_events WHERE task_id = $1', [taskId]))[0].m);
    const first = await oldest();
    await dataSource.query(
      `UPDATE task_events SET created_at = now() - interval '200 hours' WHERE task_id = $1 AND seq < $2`,
      [taskId, first + 5],
    );
    await until(async () => (await oldest()) === first + 5, 'the old events to be dropped', 30_000);
    const expired = await read(subscribe(taskId, { lastSequence: first }));
    expect(expired.map((e) => reasonOf(e))).toEqual(['EVENTS_EXPIRED']);
    const metadata = (expired[0].message.error!.data![0] as { metadata: Record<string, string> }).metadata;
    expect(metadata.oldestSequence).toBe(String(first + 5));
    // From the oldest kept on, the log is whole.
    const kept = await read(subscribe(taskId, { lastSequence: first + 4 }));
    expect(kept.map((e) => e.id)).toEqual(events.slice(first + 4).map((e) => e.id));
  });
});
