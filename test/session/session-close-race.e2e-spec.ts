import { afterAll, afterEach, beforeAll, expect, it } from '@jest/globals';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { rawCall, startServer, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { sendRequest } from '../factories/messages.js';
import { describeNeeding, runningPostgres } from '../support/requirements.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * A session closed while a message to it is on its way (docs/protocol.md §6.4: close is refused while the
 * session has an unfinished task, and a closed session takes no new message). A blocking SendMessage's task
 * may not be stored yet when its turn starts (its submitted save waits for the turn's first event), so the
 * turn's run record speaks for it: close is refused while a run of the session is running, and a turn whose
 * session was closed before its run was recorded fails instead of running on a closed session.
 * PostgreSQL only: the test holds rows and locks from a second connection to land the close in each window.
 */

/** The advisory lock the test holds while a task's first write must wait. */
const HOLD_KEY = 7_731_001;

describeNeeding(runningPostgres(), 'closing a session while a message to it starts (PostgreSQL)', () => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let client: Client;
  let sql: pg.Client;

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start({ tokens: ['Short ', 'answer.'] });
    db = await createTestDatabase();
    server = await startServer(db, {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'onprem-model',
    });
    client = await new ClientFactory().createFromUrl(server.baseUrl);
    sql = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await sql.connect();
  }, 60_000);

  afterEach(async () => {
    await sql.query('SELECT pg_advisory_unlock_all()');
    await sql.query('DROP TRIGGER IF EXISTS hold_first_insert ON tasks');
    await sql.query('DROP FUNCTION IF EXISTS hold_first_insert()');
  });

  afterAll(async () => {
    await ifAssigned(sql)?.end();
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  const rpc = async (method: string, params: Record<string, unknown>) =>
    (await rawCall(server.endpoint, { jsonrpc: '2.0', id: 1, method, params })).json;

  const newSession = async (): Promise<string> => {
    const created = await rpc('_cleveragents/session/create', {});
    expect(created.error).toBeUndefined();
    return created.result.sessionId as string;
  };

  /**
   * A close under way on a connection of its own: the session row is locked as session/close locks it;
   * `start` starts a turn of the session, which reads its session open and then waits behind the lock to
   * record its run; then the session is closed and the close committed. (Another connection watches:
   * pg_stat_activity is read once per transaction.)
   */
  async function closeWhileTurnStarts(contextId: string, start: () => Promise<void> | void): Promise<void> {
    const closing = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await closing.connect();
    try {
      await closing.query('BEGIN');
      await closing.query('SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', [contextId]);
      await start();
      await until(
        async () =>
          (
            await sql.query(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
               AND query LIKE '%INSERT INTO task_runs%'`,
            )
          ).rowCount === 1,
        'the turn to wait for the session behind the close',
        10_000,
      );
      await closing.query(
        `UPDATE sessions SET status = 'closed', closed_at = now(), updated_at = now(), revision = revision + 1
         WHERE id = $1`,
        [contextId],
      );
    } finally {
      await closing.query('COMMIT');
      await closing.end();
    }
  }

  it('close is refused while a turn of the session runs, its task not stored yet', async () => {
    const contextId = await newSession();
    // The first write of a task of this session waits until the test lets it go (an advisory lock the
    // test holds): its turn runs meanwhile.
    await sql.query('SELECT pg_advisory_lock($1)', [HOLD_KEY]);
    await sql.query(`CREATE FUNCTION hold_first_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.context_id = '${contextId}' AND NOT EXISTS (SELECT 1 FROM tasks WHERE id = NEW.id) THEN
          PERFORM pg_advisory_xact_lock_shared(${HOLD_KEY});
        END IF;
        RETURN NEW;
      END $$`);
    await sql.query(
      'CREATE TRIGGER hold_first_insert BEFORE INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION hold_first_insert()',
    );

    const sent = client.sendMessage(sendRequest('r', { text: 'a quick one', contextId }));
    await until(
      async () =>
        (await sql.query(`SELECT 1 FROM task_runs WHERE context_id = $1 AND state = 'running'`, [contextId]))
          .rowCount === 1,
      'the turn to record its run',
      10_000,
    );
    const { rows: runs } = await sql.query('SELECT task_id FROM task_runs WHERE context_id = $1', [contextId]);
    const taskId = runs[0].task_id as string;
    // The window: the turn runs, and its task is not stored yet.
    expect((await sql.query('SELECT 1 FROM tasks WHERE id = $1', [taskId])).rowCount).toBe(0);

    const busy = await rpc('_cleveragents/session/close', { sessionId: contextId });
    expect(busy.error).toMatchObject({
      code: -32004,
      message: expect.stringContaining(`has unfinished tasks (${taskId})`),
      data: [{ reason: 'SESSION_BUSY', metadata: { taskIds: taskId } }],
    });

    await sql.query('SELECT pg_advisory_unlock($1)', [HOLD_KEY]);
    const task = (await sent) as Task;
    expect(task.id).toBe(taskId);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const closed = await rpc('_cleveragents/session/close', { sessionId: contextId });
    expect(closed.result).toMatchObject({ sessionId: contextId, status: 'closed' });
  }, 30_000);

  it('a close that lands before the turn records its run fails the turn: nothing runs on the closed session', async () => {
    const contextId = await newSession();
    const completions = model.completions.length;
    let sent: Promise<unknown> = Promise.resolve();
    await closeWhileTurnStarts(contextId, () => {
      sent = client.sendMessage(sendRequest('r', { text: 'a quick one', contextId }));
    });

    const task = (await sent) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    const reason = task.status?.message?.parts[0]?.content;
    expect(reason).toEqual({ $case: 'text', value: `Session ${contextId} is closed; start a new session.` });
    // No run was recorded and the model was never asked.
    expect((await sql.query('SELECT 1 FROM task_runs WHERE task_id = $1', [task.id])).rowCount).toBe(0);
    expect(model.completions.length).toBe(completions);
  }, 30_000);

  it("a plan's turn refused that way fails the plan it had claimed: no plan is left executing with no turn", async () => {
    const contextId = await newSession();
    const created = await rpc('_cleveragents/plan/create', {
      sessionId: contextId,
      goal: 'a quick one',
      entries: [{ content: 'Answer', priority: 'high' }],
    });
    const planId = created.result.planId as string;
    expect((await rpc('_cleveragents/plan/approve', { planId })).error).toBeUndefined();
    const completions = model.completions.length;
    let taskId = '';
    await closeWhileTurnStarts(contextId, async () => {
      const started = await rpc('_cleveragents/plan/execute', { planId });
      expect(started.result).toMatchObject({ planId, status: 'executing' });
      taskId = started.result.taskId as string;
    });
    await until(
      async () => (await client.getTask({ id: taskId, tenant: '' })).status?.state === TaskState.TASK_STATE_FAILED,
      "the plan's task to fail",
      10_000,
    );
    const plan = await rpc('_cleveragents/plan/get', { planId });
    expect(plan.result).toMatchObject({ planId, taskId, status: 'failed' });
    expect(model.completions.length).toBe(completions);
  }, 30_000);
});
