/**
 * Finished tasks are read from memory (they never change in normal operation), yet a change or a
 * delete by SQL reaches every replica through the database's notification, and a task that is still
 * running is always read from the database.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { createTestDatabase, databaseTargets, type TestDatabase } from '../support/database.js';
import { rawCall, startServer, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { describeNeeding, runningPostgres } from '../support/requirements.js';
import { ifAssigned } from '../support/assigned.js';

const V1 = { 'a2a-version': '1.0' };

async function send(server: TestServer, messageId: string): Promise<{ id: string; status: { state: string } }> {
  const res = await rawCall(
    server.endpoint,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId, role: 'ROLE_USER', parts: [{ text: 'hello' }] } },
    },
    V1,
  );
  return res.json.result.task;
}

async function getTask(server: TestServer, id: string) {
  return (await rawCall(server.endpoint, { jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id } }, V1)).json;
}

describe.each(databaseTargets())('finished tasks in memory on $kind', (target) => {
  let db: TestDatabase;
  let server: TestServer;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await target.create();
    server = await startServer(db);
    dataSource = server.app.get(DataSource);
  });
  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('a finished task changed by SQL is read anew on the next GetTask', async () => {
    const task = await send(server, 'tck-complete-task-cache-1');
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await getTask(server, task.id)).result.metadata).toBeUndefined();
    await dataSource.query(
      `UPDATE tasks SET task = jsonb_set(task, '{metadata}', '{"fixed":"by an operator"}') WHERE id = $1`,
      [task.id],
    );
    await until(async () => (await getTask(server, task.id)).result.metadata?.fixed === 'by an operator', 'the change');
  });

  it('a finished task deleted by SQL is gone for the next GetTask', async () => {
    const task = await send(server, 'tck-complete-task-cache-2');
    expect((await getTask(server, task.id)).result.id).toBe(task.id);
    await dataSource.query('DELETE FROM tasks WHERE id = $1', [task.id]);
    await until(async () => (await getTask(server, task.id)).error?.code === -32001, 'the delete');
  });

  it('a task still waiting for input is read from the database every time', async () => {
    const task = await send(server, 'tck-input-required-cache-3');
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect((await getTask(server, task.id)).result.metadata).toBeUndefined();
    // No trigger fires for a task that is not finished: only a read from the database can see this.
    await dataSource.query(
      `UPDATE tasks SET task = jsonb_set(task, '{metadata}', '{"seen":"at once"}') WHERE id = $1`,
      [task.id],
    );
    expect((await getTask(server, task.id)).result.metadata).toEqual({ seen: 'at once' });
  });
});

describeNeeding(runningPostgres(), 'finished tasks in memory across replicas on PostgreSQL', () => {
  let db: TestDatabase;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await startServer(db);
    b = await startServer(db);
  });
  afterAll(async () => {
    await ifAssigned(b)?.close();
    await ifAssigned(a)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('GetTask of a finished task needs no database read: it answers while the tasks table is locked', async () => {
    const task = await send(a, 'tck-complete-task-cache-4');
    expect((await getTask(b, task.id)).result.status.state).toBe('TASK_STATE_COMPLETED');
    const locker = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE');
      const answers = await Promise.all(Array.from({ length: 5 }, () => getTask(b, task.id)));
      expect(answers.map((answer) => answer.result.id)).toEqual(Array(5).fill(task.id));
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });

  it('an operator’s change to a finished task reaches the replica that holds it', async () => {
    const task = await send(a, 'tck-complete-task-cache-5');
    expect((await getTask(b, task.id)).result.metadata).toBeUndefined();
    const operator = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await operator.connect();
    try {
      await operator.query(`UPDATE tasks SET task = jsonb_set(task, '{metadata}', '{"v":2}') WHERE id = $1`, [task.id]);
    } finally {
      await operator.end();
    }
    await until(async () => (await getTask(b, task.id)).result.metadata?.v === 2, 'the change on B');
  });
});
