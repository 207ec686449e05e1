import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint, type EndpointAnswer } from '../support/openai-endpoint.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { describeNeeding, runningPostgres } from '../support/requirements.js';
import { localBackendEnv, startProcess, stopAll, type ServerProcess } from '../support/server-process.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * A take-over after kill -9, in the traces two real server processes export over OTLP: a turn started by a
 * traced call is under way on A (its model holds the answer) when A is killed; B takes the run over once
 * the lease lapses. B's take_over span is linked to the trace the first call started, which A's own spans
 * (never ended) could not carry further, and the taken-over turn runs under it to its answer.
 */

const LEASE_SECONDS = 2;

describeNeeding(runningPostgres(), 'a turn taken over after kill -9, in the traces', () => {
  let receiver: OtlpReceiver;
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  const servers: ServerProcess[] = [];
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    let calls = 0;
    // A's model call never answers (A dies holding it); B's is answered at once.
    model = await OpenAiCompatibleEndpoint.start((): EndpointAnswer =>
      calls++ === 0 ? { tokens: ['Half '], heldUntil: released } : { tokens: ['Taken ', 'over.'] },
    );
    db = await createTestDatabase();
  });

  afterAll(async () => {
    release();
    await stopAll(servers);
    await ifAssigned(receiver)?.close();
    await ifAssigned(model)?.close();
    await ifAssigned(db)?.cleanup();
  });

  async function storedTraceParent(taskId: string): Promise<string | null> {
    const client = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ trace_parent: string | null }>(
        'SELECT trace_parent FROM task_runs WHERE task_id = $1',
        [taskId],
      );
      return rows[0]?.trace_parent ?? null;
    } finally {
      await client.end();
    }
  }

  it('links the take-over on B to the trace of the call A was killed under', async () => {
    const env = { ...localBackendEnv(db, model.baseUrl(), LEASE_SECONDS), ...receiver.env() };
    const a = await startProcess(env);
    servers.push(a);
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');

    const sent = await fetch(`${a.baseUrl}/a2a`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'a2a-version': '1.0',
        traceparent: `00-${traceId}-${callerSpan}-01`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'Take your time.' }] },
          configuration: { returnImmediately: true },
        },
      }),
    });
    const answer = (await sent.json()) as { result?: { task?: { id: string } } };
    const taskId = answer.result?.task?.id;
    expect(taskId).toEqual(expect.any(String));
    await until(() => model.completions.length === 1, 'A’s model call to start');
    // The call has answered, so A exports its span within its batch delay: waited for, since a kill -9
    // loses whatever a process has not exported yet.
    const [call] = (
      await receiver.waitForSpans((all) => all.some((s) => s.name === 'SendMessage' && s.traceId === traceId))
    ).filter((s) => s.name === 'SendMessage' && s.traceId === traceId);
    expect(call.parentSpanId).toBe(callerSpan);
    // The run keeps where it was started: a span of the caller's trace.
    expect(await storedTraceParent(taskId!)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    a.process.kill('SIGKILL');
    await a.exited;
    const b = await startProcess(env);
    servers.push(b);

    const spans = await receiver.waitForSpans(
      (all) => all.some((s) => s.name.startsWith('take_over') && s.endTimeUnixNano !== '0'),
      60_000,
    );
    const takeOvers = spans.filter((s) => s.name.startsWith('take_over'));
    expect(takeOvers.map((s) => s.attributes['cleveragents.task.id'])).toEqual([taskId]);
    const [takeOver] = takeOvers;
    expect(takeOver.attributes['cleveragents.task.id']).toBe(taskId);
    expect(takeOver.traceId).not.toBe(traceId);
    // On a failure, what the take-over said of itself and what B logged tell which side lost the link.
    expect({ links: takeOver.links, takeOver: takeOver.attributes, log: takeOver.links.length ? '' : b.log() }).toEqual(
      {
        links: [
          expect.objectContaining({
            traceId,
            attributes: expect.objectContaining({ 'cleveragents.link': 'taken_over' }),
          }),
        ],
        takeOver: takeOver.attributes,
        log: '',
      },
    );
    // B's model call was made: the taken-over turn went on to its answer.
    await until(() => model.completions.length === 2, 'B’s model call');
  }, 120_000);
});
