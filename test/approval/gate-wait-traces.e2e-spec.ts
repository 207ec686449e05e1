import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Role, type Message } from '@a2a-js/sdk';
import { SpanKind, trace, type Span } from '@opentelemetry/api';
import { DataSource } from 'typeorm';
import { APPROVAL_RESPONSE_TYPE } from '@cleveragents/contract';
import { ownerCallContext, type StoreScope } from '../../packages/server/src/database/store-scope.js';
import { dataPart, textPart } from '../../packages/server/src/execution/agent-events.js';
import { MetricsService } from '../../packages/server/src/metrics/metrics.service.js';
import { spanContextOf, traceparentOf } from '../../packages/server/src/telemetry/tracing.js';
import { TaskControl } from '../../packages/server/src/turn/task-control.js';
import { CAPABILITIES, type Json } from '../support/orchestration.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { ManualClock } from '../support/manual-clock.js';
import { OpenAiCompatibleEndpoint, type EndpointAnswer } from '../support/openai-endpoint.js';
import { extensionCalls, startServer, type TestServer } from '../support/server.js';
import { parentSpanId, startTestTracing, type TestTracing } from '../support/tracing.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * A gate's wait in the traces: a plan gate of the server's orchestrator (a `manual` profile, its model a
 * scripted endpoint) asked by a turn started in a traced call, answered in another traced call or denied by
 * its timeout (the server's clock moved by the test). The wait is a `gate_wait plan` span in the asking
 * call's trace, from the approval's asking to its end, linked to what answered it; the approvals are counted.
 * Real OpenTelemetry SDK spans, in process; the messages go through the server's own request handler.
 */

const PLAN = [{ content: 'Read the notes', priority: 'high', status: 'pending' }];
const TIMEOUT_SECONDS = 120;

/** The orchestrator's model: it writes a plan; once it has a tool's result, it answers "Done.". */
function orchestratorModel(body: Json): EndpointAnswer {
  const messages = body.messages as Json[];
  if (messages.some((m) => m.role === 'tool')) return { tokens: ['Done', '.'] };
  return { toolCalls: [{ id: 'plan-1', name: 'update_plan', arguments: JSON.stringify({ entries: PLAN }) }] };
}

/** [seconds, nanoseconds] → milliseconds. */
const millisOf = ([seconds, nanos]: [number, number]): number => seconds * 1000 + nanos / 1e6;

describe.each(databaseTargets())('gate waits in traces and metrics, on $kind', (target) => {
  const clock = new ManualClock();
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let tracing: TestTracing | undefined;
  let namespace: string;
  const { ok } = extensionCalls(() => server);

  const sql = <T>(query: string, params: unknown[] = []): Promise<T[]> =>
    server.app.get(DataSource).query(query, params);

  /** Sends `message` to the server's request handler as a client's SendMessage would, in the active context. */
  const send = (scope: StoreScope, message: Message) =>
    server.app.get(TaskControl).start(message, ownerCallContext(scope));

  const messageOf = (contextId: string, parts: Message['parts'], taskId = ''): Message => ({
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_USER,
    parts,
    metadata: CAPABILITIES,
    extensions: [],
    referenceTaskIds: [],
  });

  interface Asked {
    scope: StoreScope;
    sessionId: string;
    taskId: string;
    approval: { id: string; request_id: string; asked_at: Date; trace_parent: string | null };
  }

  /** A plan gate: a session of `profile`, its first message sent (in the active context), its approval pending. */
  async function askGate(profile: string): Promise<Asked> {
    const { sessionId } = await ok('session/create', { profile });
    const [{ owner }] = await sql<{ owner: string }>('SELECT owner FROM sessions WHERE id = $1', [sessionId]);
    const scope = { namespace, owner };
    const task = await send(scope, messageOf(sessionId, [textPart('go')]));
    let pending: Asked['approval'][] = [];
    await until(async () => {
      pending = await sql<Asked['approval']>(
        `SELECT id, request_id, asked_at, trace_parent FROM approvals WHERE task_id = $1 AND state = 'pending'`,
        [task.id],
      );
      const stored = await sql<{ state: string }>('SELECT state FROM tasks WHERE id = $1', [task.id]);
      return pending.length === 1 && stored[0]?.state === 'TASK_STATE_INPUT_REQUIRED';
    }, 'the task to wait at its plan gate');
    return { scope, sessionId, taskId: task.id, approval: pending[0] };
  }

  /** The task's answer as a client sends it in-stream (in the active context). */
  const answer = (gate: Asked, decision: 'approve' | 'reject') =>
    send(
      gate.scope,
      messageOf(
        gate.sessionId,
        [dataPart({ type: APPROVAL_RESPONSE_TYPE, requestId: gate.approval.request_id, decision })],
        gate.taskId,
      ),
    );

  /** Waits for the task's turn to end after its answer (before the test lets the server go). */
  const settled = (taskId: string) =>
    until(async () => {
      const [stored] = await sql<{ state: string }>('SELECT state FROM tasks WHERE id = $1', [taskId]);
      const [run] = await sql<{ state: string }>('SELECT state FROM task_runs WHERE task_id = $1', [taskId]);
      return ['TASK_STATE_COMPLETED', 'TASK_STATE_REJECTED'].includes(stored.state) && run.state === 'resting';
    }, 'the task to end');

  /** Runs `fn` in a new active span (a real SDK span), ended once `fn` settled. */
  const inTestSpan = <T>(name: string, fn: (span: Span) => Promise<T>): Promise<T> =>
    trace.getTracer('gate-wait-test').startActiveSpan(name, async (span) => {
      try {
        return await fn(span);
      } finally {
        span.end();
      }
    });

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start(orchestratorModel);
    db = await target.create();
    server = await startServer(
      db,
      {
        CLEVERAGENTS_ACTOR_BACKEND: 'local',
        CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
        CLEVERAGENTS_MODEL: 'gates',
      },
      { clock },
    );
    namespace = (await ok('auth/whoami')).defaultNamespace;
    await ok('registry/create', { kind: 'profile', name: 'gated', spec: { gate: 'manual' } });
    await ok('registry/create', {
      kind: 'profile',
      name: 'timed',
      spec: { gate: 'manual', approvalTimeout: { seconds: TIMEOUT_SECONDS, onTimeout: 'deny' } },
    });
  }, 60_000);

  afterAll(async () => {
    await tracing?.stop();
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  it('with tracing off, stores no trace_parent and still counts the approvals', async () => {
    expect(traceparentOf()).toBeUndefined();
    const gate = await askGate('gated');
    expect(gate.approval.trace_parent).toBeNull();
    const [run] = await sql<{ trace_parent: string | null }>('SELECT trace_parent FROM task_runs WHERE task_id = $1', [
      gate.taskId,
    ]);
    expect(run).toEqual({ trace_parent: null });
    await answer(gate, 'reject');
    await until(
      async () =>
        (await sql('SELECT 1 FROM approvals WHERE id = $1 AND state = $2', [gate.approval.id, 'rejected'])).length > 0,
      'the approval rejected',
    );
    await settled(gate.taskId);
    const metrics = await server.app.get(MetricsService).render();
    expect(metrics).toContain(`cleveragents_approvals_asked_total{namespace="${namespace}",kind="plan"} 1`);
    expect(metrics).toContain(
      `cleveragents_approvals_answered_total{namespace="${namespace}",kind="plan",decision="rejected"} 1`,
    );
    expect(metrics).toContain(
      `cleveragents_approval_wait_seconds_count{namespace="${namespace}",kind="plan",decision="rejected"} 1`,
    );
  });

  it("an answered gate's wait is a span in the asking call's trace, from its asking to its answer, linked to the answer", async () => {
    tracing = startTestTracing();
    let askingTrace = '';
    const gate = await inTestSpan('SendMessage (asks)', async (span) => {
      askingTrace = span.spanContext().traceId;
      return askGate('gated');
    });
    // Stored: where in the asking call's trace the gate was asked (the call's span, or a turn's under it).
    const asker = spanContextOf(gate.approval.trace_parent);
    expect(asker?.traceId).toBe(askingTrace);
    const [run] = await sql<{ trace_parent: string }>('SELECT trace_parent FROM task_runs WHERE task_id = $1', [
      gate.taskId,
    ]);
    expect(spanContextOf(run.trace_parent)?.traceId).toBe(askingTrace);
    expect(tracing.named('gate_wait plan')).toEqual([]);

    clock.advance(90_000);
    const answering = await inTestSpan('SendMessage (answers)', async (span) => {
      await answer(gate, 'approve');
      await until(() => tracing!.named('gate_wait plan').length > 0, 'the gate_wait span');
      return span.spanContext();
    });
    await settled(gate.taskId);

    const [wait] = tracing.named('gate_wait plan');
    expect(wait.kind).toBe(SpanKind.INTERNAL);
    expect(wait.spanContext().traceId).toBe(askingTrace);
    expect(parentSpanId(wait)).toBe(asker?.spanId);
    expect(millisOf(wait.startTime)).toBe(gate.approval.asked_at.getTime());
    expect(millisOf(wait.endTime) - millisOf(wait.startTime)).toBe(90_000);
    expect(wait.links.map((l) => [l.context.traceId, l.context.spanId, l.attributes])).toEqual([
      [answering.traceId, answering.spanId, { 'cleveragents.link': 'answered_by' }],
    ]);
    expect(wait.attributes).toEqual({
      'cleveragents.approval.id': gate.approval.id,
      'cleveragents.approval.kind': 'plan',
      'cleveragents.approval.decision': 'approved',
      'cleveragents.approval.answered_by': gate.scope.owner,
      'cleveragents.approval.wait_seconds': 90,
      'cleveragents.namespace': namespace,
      'cleveragents.task.id': gate.taskId,
      'cleveragents.session': gate.sessionId,
    });
    const metrics = await server.app.get(MetricsService).render();
    expect(metrics).toContain(`cleveragents_approvals_asked_total{namespace="${namespace}",kind="plan"} 2`);
    expect(metrics).toContain(
      `cleveragents_approvals_answered_total{namespace="${namespace}",kind="plan",decision="approved"} 1`,
    );
  });

  it("a gate its timeout denies: the wait ends timed_out after exactly the timeout, linked to the timeout's own span", async () => {
    tracing!.reset();
    let askingTrace = '';
    const gate = await inTestSpan('SendMessage (asks)', async (span) => {
      askingTrace = span.spanContext().traceId;
      return askGate('timed');
    });
    const due = gate.approval.asked_at.getTime() + TIMEOUT_SECONDS * 1000;
    await until(() => clock.dueTimes().includes(due), 'the timeout armed');
    clock.advance(due - clock.now());
    await until(() => tracing!.named('approval_timeout plan').length > 0, 'the approval_timeout span');
    await settled(gate.taskId);

    const [wait] = tracing!.named('gate_wait plan');
    const [timeout] = tracing!.named('approval_timeout plan');
    expect(wait.spanContext().traceId).toBe(askingTrace);
    expect(parentSpanId(wait)).toBe(spanContextOf(gate.approval.trace_parent)?.spanId);
    expect(wait.attributes).toMatchObject({
      'cleveragents.approval.id': gate.approval.id,
      'cleveragents.approval.decision': 'timed_out',
      'cleveragents.approval.answered_by': 'system',
      'cleveragents.approval.wait_seconds': TIMEOUT_SECONDS,
    });
    // What answered it: the timeout, in a trace of its own (no call was behind it).
    expect(timeout.kind).toBe(SpanKind.INTERNAL);
    expect(parentSpanId(timeout)).toBeUndefined();
    expect(timeout.attributes).toMatchObject({ 'cleveragents.approval.id': gate.approval.id });
    expect(wait.links.map((l) => [l.context.spanId, l.attributes])).toEqual([
      [timeout.spanContext().spanId, { 'cleveragents.link': 'answered_by' }],
    ]);
    const metrics = await server.app.get(MetricsService).render();
    expect(metrics).toContain(
      `cleveragents_approvals_answered_total{namespace="${namespace}",kind="plan",decision="timed_out"} 1`,
    );
    expect(metrics).toMatch(
      new RegExp(
        `^cleveragents_approval_wait_seconds_sum\\{namespace="${namespace}",kind="plan",decision="timed_out"\\} ${TIMEOUT_SECONDS}$`,
        'm',
      ),
    );
  });
});
