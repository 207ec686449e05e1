import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Role } from '@a2a-js/sdk';
import { trace } from '@opentelemetry/api';
import { DataSource } from 'typeorm';
import { ownerCallContext, type StoreScope } from '../../packages/server/src/database/store-scope.js';
import { textPart } from '../../packages/server/src/execution/agent-events.js';
import { MetricsService } from '../../packages/server/src/metrics/metrics.service.js';
import { TaskControl } from '../../packages/server/src/turn/task-control.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { extensionCalls, startServer, type TestServer } from '../support/server.js';
import { startTestTracing, type TestTracing } from '../support/tracing.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * A statement retried while the database is away, in the traces and the metrics: a trigger makes the write
 * that records a turn's run fail once as a lost connection would (SQLSTATE 08006), the turn's write waits it
 * out. The span active then (the call that sent the message) gets a `cleveragents.db.retry` event saying
 * which write, which attempt and why, and nothing of the statement's values; cleveragents_db_retries counts
 * it, with a span active or not. Real SDK spans in process, both databases.
 */

const SECRET_TEXT = 'the statement values must stay out of telemetry';

describe.each(databaseTargets())('database retries in traces and metrics, on $kind', (target) => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let tracing: TestTracing;
  let scope: StoreScope;
  const { ok } = extensionCalls(() => server);

  const sql = <T>(query: string, params: unknown[] = []): Promise<T[]> =>
    server.app.get(DataSource).query(query, params);

  /** Sends a message on a new session and waits for its task to complete; the write recording its run fails once. */
  async function sendFailingOnce(): Promise<void> {
    await sql(`SELECT setval('fail_run_once', 1, false)`);
    const { sessionId } = await ok('session/create', {});
    const task = await server.app.get(TaskControl).start(
      {
        messageId: randomUUID(),
        contextId: sessionId,
        taskId: '',
        role: Role.ROLE_USER,
        parts: [textPart(SECRET_TEXT)],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      ownerCallContext(scope),
    );
    await until(async () => {
      const [stored] = await sql<{ state: string }>('SELECT state FROM tasks WHERE id = $1', [task.id]);
      return stored.state === 'TASK_STATE_COMPLETED';
    }, 'the task to complete');
  }

  const retriesCounted = async (): Promise<string | undefined> =>
    /^cleveragents_db_retries_total\{operation="write",error="08006"\} (\d+)$/m.exec(
      await server.app.get(MetricsService).render(),
    )?.[1];

  beforeAll(async () => {
    tracing = startTestTracing();
    model = await OpenAiCompatibleEndpoint.start({ tokens: ['Short ', 'answer.'] });
    db = await target.create();
    server = await startServer(db, {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'retries',
      CLEVERAGENTS_DATABASE_RETRY_SECONDS: '30',
    });
    const { sessionId } = await ok('session/create', {});
    [scope] = await sql<StoreScope>('SELECT namespace, owner FROM sessions WHERE id = $1', [sessionId]);
    // The sequence moves on whatever rolls back: the first insert after setval(…, 1, false) fails, the next passes.
    await sql('CREATE SEQUENCE fail_run_once');
    await sql(`CREATE FUNCTION fail_run_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('fail_run_once') = 1 THEN
          RAISE EXCEPTION 'connection to the database lost (test)' USING ERRCODE = '08006';
        END IF;
        RETURN NEW;
      END $$`);
    await sql('CREATE TRIGGER fail_run_once BEFORE INSERT ON task_runs FOR EACH ROW EXECUTE FUNCTION fail_run_once()');
  }, 60_000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await tracing.stop();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  it('adds a retry event to the active span, with no statement values, and counts it', async () => {
    const events = await trace.getTracer('retry-test').startActiveSpan('SendMessage', async (span) => {
      try {
        await sendFailingOnce();
      } finally {
        span.end();
      }
      return tracing.named('SendMessage')[0].events;
    });
    expect(events.map((e) => [e.name, e.attributes])).toEqual([
      [
        'cleveragents.db.retry',
        {
          'cleveragents.db.operation': 'record a turn',
          'cleveragents.db.retry.attempt': 1,
          'cleveragents.db.retry.delay_ms': 100,
          'cleveragents.db.retry.kind': 'write',
          'error.type': '08006',
        },
      ],
    ]);
    expect(JSON.stringify(tracing.spans().map((s) => [s.attributes, s.events]))).not.toContain(SECRET_TEXT);
    expect(await retriesCounted()).toBe('1');
  });

  it('counts a retry with no span active', async () => {
    tracing.reset();
    expect(trace.getActiveSpan()).toBeUndefined();
    await sendFailingOnce();
    expect(tracing.spans().flatMap((s) => s.events)).toEqual([]);
    expect(await retriesCounted()).toBe('2');
  });
});
