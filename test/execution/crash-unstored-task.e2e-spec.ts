import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { rawCall } from '../support/server.js';
import { localBackendEnv, startProcess, type ServerProcess } from '../support/server-process.js';
import { until } from '../support/wait.js';
import { sendRequest } from '../factories/messages.js';
import { describeNeeding, runningPostgres } from '../support/requirements.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * docs/protocol.md §5, §9: the server process is killed (SIGKILL) while a blocking SendMessage's turn has
 * recorded its run but its task is not stored yet (the submitted save waits for the turn's first event, and
 * here its write is held in the database). The caller was never answered, so nothing acknowledged is lost;
 * the next start must settle the run of a task that does not exist, not hang on it or invent the task, and
 * a message sent again then runs normally. PostgreSQL only: the test holds the task's first write from a
 * connection of its own and ends it as a lost connection would.
 */

describeNeeding(runningPostgres(), 'a server killed before its task was stored (PostgreSQL)', () => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: ServerProcess | undefined;
  let sql: pg.Client;

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start({ tokens: ['Short ', 'answer.'] });
    db = await createTestDatabase();
    sql = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await sql.connect();
  });

  afterAll(async () => {
    if (server && server.process.exitCode === null) {
      server.process.kill('SIGKILL');
      await server.exited;
    }
    await ifAssigned(sql)?.end();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  const env = (): Record<string, string> => localBackendEnv(db, model.baseUrl(), 2);

  it('the next start rests the run of the task never stored; the caller had no answer; a new message runs', async () => {
    server = await startProcess(env());
    // Every first write of a task waits in the database until the test ends it.
    await sql.query(`CREATE FUNCTION hold_first_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM tasks WHERE id = NEW.id) THEN PERFORM pg_sleep(60); END IF;
        RETURN NEW;
      END $$`);
    await sql.query(
      'CREATE TRIGGER hold_first_insert BEFORE INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION hold_first_insert()',
    );
    const completions = model.completions.length;

    const answered = rawCall(`${server.baseUrl}/a2a`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'never-stored', role: 'ROLE_USER', parts: [{ text: 'a quick one' }] } },
    }).then(
      () => 'answered',
      () => 'no answer',
    );
    await until(
      async () => (await sql.query(`SELECT 1 FROM task_runs WHERE state = 'running'`)).rowCount === 1,
      'the turn to record its run',
      10_000,
    );
    const { rows: runs } = await sql.query('SELECT task_id FROM task_runs');
    const taskId = runs[0].task_id as string;
    // The task's first write is under way, held.
    const held = `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep'
                  AND query LIKE '%INSERT INTO tasks%'`;
    await until(async () => (await sql.query(held)).rowCount === 1, 'the task write to be held', 10_000);
    expect((await sql.query('SELECT 1 FROM tasks WHERE id = $1', [taskId])).rowCount).toBe(0);

    server.process.kill('SIGKILL');
    expect(await server.exited).toBeNull(); // killed by a signal
    expect(await answered).toBe('no answer');
    // The held write dies with its connection, as it would had the process's socket closed mid-statement.
    const { rows: ended } = await sql.query(`SELECT pg_terminate_backend(pid) AS ended FROM (${held}) h`);
    expect(ended).toEqual([{ ended: true }]);
    await until(async () => (await sql.query(held)).rowCount === 0, 'the held write to end', 10_000);
    await sql.query('DROP TRIGGER hold_first_insert ON tasks');
    expect((await sql.query('SELECT 1 FROM tasks WHERE id = $1', [taskId])).rowCount).toBe(0);

    // The next start: the run's lease has lapsed; the task it was for does not exist.
    server = await startProcess(env());
    await until(
      async () =>
        (await sql.query('SELECT state FROM task_runs WHERE task_id = $1', [taskId])).rows[0]?.state === 'resting',
      'the run of the task never stored to rest',
      20_000,
    );
    expect((await sql.query('SELECT 1 FROM tasks WHERE id = $1', [taskId])).rowCount).toBe(0);
    const lookup = await rawCall(`${server.baseUrl}/a2a`, {
      jsonrpc: '2.0',
      id: 2,
      method: 'GetTask',
      params: { id: taskId },
    });
    expect(lookup.json.error?.code).toBe(-32001);
    expect(model.completions.length).toBe(completions); // nothing ran it, before or after the kill
    expect(server.log()).not.toMatch(/task recovery failed/);

    // Sent again, the message runs to its answer.
    const client = await new ClientFactory().createFromUrl(server.baseUrl);
    const task = (await client.sendMessage(sendRequest('again', { text: 'a quick one' }))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(model.completions.length).toBe(completions + 1);
  }, 120_000);
});
