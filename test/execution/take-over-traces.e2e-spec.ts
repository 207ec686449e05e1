import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Role } from '@a2a-js/sdk';
import { SpanKind, trace } from '@opentelemetry/api';
import { DataSource } from 'typeorm';
import { ownerCallContext } from '../../packages/server/src/database/store-scope.js';
import { textPart } from '../../packages/server/src/execution/agent-events.js';
import { MetricsService } from '../../packages/server/src/metrics/metrics.service.js';
import { traceparentOf } from '../../packages/server/src/telemetry/tracing.js';
import { TaskControl } from '../../packages/server/src/turn/task-control.js';
import { TaskRuns } from '../../packages/server/src/turn/task-runs.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint, type EndpointAnswer } from '../support/openai-endpoint.js';
import { extensionCalls, startServer, type TestServer } from '../support/server.js';
import { parentSpanId, startTestTracing, type TestTracing } from '../support/tracing.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * A take-over in the traces: a local-backend turn, started in a traced call, is under way (its model holds
 * its answer) when its server stops; the runs stay running with their leases given up, and the next server
 * takes the run over at boot. The take-over is a `take_over` span of a trace of its own, linked to where the
 * first run started (its stored trace_parent), naming the task, the backend and both replicas; the run then
 * records the take-over as where it goes on; the take-over is counted. Real SDK spans, in process.
 */

describe.each(databaseTargets())('a run taken over after its server stopped, on $kind', (target) => {
  let hold: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (hold = resolve));
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let first: TestServer | undefined;
  let second: TestServer | undefined;
  let tracing: TestTracing;
  const { ok } = extensionCalls(() => (second ?? first)!);

  const env = (): Record<string, string> => ({
    CLEVERAGENTS_ACTOR_BACKEND: 'local',
    CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
    CLEVERAGENTS_MODEL: 'take-over',
    CLEVERAGENTS_TASK_LEASE_SECONDS: '2',
  });

  const sql = <T>(server: TestServer, query: string, params: unknown[] = []): Promise<T[]> =>
    server.app.get(DataSource).query(query, params);

  beforeAll(async () => {
    tracing = startTestTracing();
    let answered = 0;
    // The first turn's answer is held until the test ends; the turn taken over is answered at once.
    model = await OpenAiCompatibleEndpoint.start((): EndpointAnswer =>
      answered++ === 0 ? { tokens: ['Half '], heldUntil: held } : { tokens: ['Done', '.'] },
    );
    db = await target.create();
  });

  afterAll(async () => {
    hold();
    await ifAssigned(second)?.close();
    await ifAssigned(first)?.close();
    await tracing.stop();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  it('is a take_over span of a trace of its own, linked to the first run, that the run then records; counted', async () => {
    first = await startServer(db, env());
    const { sessionId } = await ok('session/create', {});
    const [{ namespace, owner }] = await sql<{ namespace: string; owner: string }>(
      first,
      'SELECT namespace, owner FROM sessions WHERE id = $1',
      [sessionId],
    );
    const firstReplica = first.app.get(TaskRuns).replica;

    // The first run, sent in a traced call that lasts until its turn is under way.
    const { taskId, firstRun } = await trace
      .getTracer('take-over-test')
      .startActiveSpan('SendMessage', async (span) => {
        const task = await first!.app.get(TaskControl).start(
          {
            messageId: randomUUID(),
            contextId: sessionId,
            taskId: '',
            role: Role.ROLE_USER,
            parts: [textPart('a long one')],
            metadata: undefined,
            extensions: [],
            referenceTaskIds: [],
          },
          ownerCallContext({ namespace, owner }),
        );
        await until(() => model.completions.length > 0, 'the first turn to ask its model');
        const traceparent = traceparentOf(span);
        span.end();
        return { taskId: task.id, firstRun: traceparent };
      });
    if (firstRun === undefined) throw new Error('the first run was not traced');
    const [run] = await sql<{ state: string; trace_parent: string; lease_owner: string }>(
      first,
      'SELECT state, trace_parent, lease_owner FROM task_runs WHERE task_id = $1',
      [taskId],
    );
    // Where the run started: the call that sent its message.
    expect(run).toEqual({ state: 'running', trace_parent: firstRun, lease_owner: firstReplica });

    // The server stops mid-turn: the run stays running, its lease given up; the next server takes it over.
    await first.close();
    first = undefined;
    tracing.reset();
    second = await startServer(db, env());
    await until(() => tracing.spans().some((s) => s.name.startsWith('take_over')), 'the take-over span');
    await until(async () => {
      const [now] = await sql<{ state: string }>(second!, 'SELECT state FROM tasks WHERE id = $1', [taskId]);
      return now.state === 'TASK_STATE_COMPLETED';
    }, 'the task taken over to complete');

    const takeOvers = tracing.spans().filter((s) => s.name.startsWith('take_over'));
    expect(takeOvers).toHaveLength(1);
    const [takeOver] = takeOvers;
    const [, firstTrace, firstSpan] = firstRun.split('-');
    expect(takeOver.kind).toBe(SpanKind.INTERNAL);
    // A trace of its own, linked to the first run's span.
    expect(parentSpanId(takeOver)).toBeUndefined();
    expect(takeOver.spanContext().traceId).not.toBe(firstTrace);
    expect(takeOver.links.map((l) => [l.context.traceId, l.context.spanId, l.attributes])).toEqual([
      [firstTrace, firstSpan, { 'cleveragents.link': 'taken_over' }],
    ]);
    expect(takeOver.attributes).toMatchObject({
      'cleveragents.task.id': taskId,
      'cleveragents.session': sessionId,
      'cleveragents.namespace': namespace,
      'cleveragents.backend': 'local',
      'cleveragents.replica': second.app.get(TaskRuns).replica,
      'cleveragents.take_over.previous_replica': firstReplica,
      'cleveragents.take_over.outcome': 'resumed',
    });
    // The run now goes on from the take-over: a later take-over links to it.
    const [after] = await sql<{ trace_parent: string }>(
      second,
      'SELECT trace_parent FROM task_runs WHERE task_id = $1',
      [taskId],
    );
    expect(after.trace_parent).toBe(
      `00-${takeOver.spanContext().traceId}-${takeOver.spanContext().spanId}-0${takeOver.spanContext().traceFlags}`,
    );
    const metrics = await second.app.get(MetricsService).render();
    expect(metrics).toContain('cleveragents_takeovers_total{backend="local",outcome="resumed"} 1');
  }, 60_000);
});
