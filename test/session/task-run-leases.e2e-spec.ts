import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { startServer, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { sendRequest } from '../factories/messages.js';
import { describeNeeding, runningPostgres } from '../support/requirements.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * A turn ends while the write that records its end (its run `resting`) fails as if PostgreSQL had gone
 * away, beyond the budget of a turn's writes (CLEVERAGENTS_TURN_OUTAGE_SECONDS). The replica must not keep renewing that run's lease (no turn runs it
 * here any more), and once the database answers again its own sweep settles the run: the task is
 * finished, so the run is rested and nothing runs again. PostgreSQL only: a trigger stands in for the
 * outage so that only that one write fails (the connection-exception SQLSTATE 08006 the driver reports
 * for a connection lost).
 */

const LEASE_SECONDS = 2;

describeNeeding(runningPostgres(), 'the run of a turn whose end could not be recorded (PostgreSQL, 2 s leases)', () => {
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
      CLEVERAGENTS_TASK_LEASE_SECONDS: String(LEASE_SECONDS),
      CLEVERAGENTS_DATABASE_RETRY_SECONDS: '1',
      // The budget of a running turn's own writes, which marking its run resting is.
      CLEVERAGENTS_TURN_OUTAGE_SECONDS: '1',
    });
    client = await new ClientFactory().createFromUrl(server.baseUrl);
    sql = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await sql.connect();
  }, 60_000);

  afterAll(async () => {
    await ifAssigned(sql)?.end();
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  async function runOf(taskId: string): Promise<{ state: string; lease_owner: string | null; lapsed: boolean }> {
    const { rows } = await sql.query(
      'SELECT state, lease_owner, lease_expires_at < now() AS lapsed FROM task_runs WHERE task_id = $1',
      [taskId],
    );
    return rows[0];
  }

  it('its lease lapses, and once the database answers the replica rests the run itself', async () => {
    // Every write that marks a run resting fails as a lost connection would, until the trigger goes.
    await sql.query(`CREATE FUNCTION fail_rest() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.state = 'resting' THEN
          RAISE EXCEPTION 'connection to the database lost (test)' USING ERRCODE = '08006';
        END IF;
        RETURN NEW;
      END $$`);
    await sql.query('CREATE TRIGGER fail_rest BEFORE UPDATE ON task_runs FOR EACH ROW EXECUTE FUNCTION fail_rest()');

    const task = (await client.sendMessage(sendRequest('l', { text: 'a quick one' }))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const requests = model.requests.length;
    expect(await runOf(task.id)).toMatchObject({ state: 'running', lease_owner: expect.any(String) });

    // No turn runs it here: its lease is not renewed and runs out (renewed, it never would).
    await until(
      async () => (await runOf(task.id)).lapsed,
      'the lease of a turn that ended here to lapse',
      4 * LEASE_SECONDS * 1000,
    );

    // The database answers again: the replica's own sweep takes the run over and rests it.
    await sql.query('DROP TRIGGER fail_rest ON task_runs');
    const back = Date.now();
    // A lapsed lease is found by the next sweep (one per lease period); the bound leaves a loaded machine slack.
    await until(
      async () => (await runOf(task.id)).state === 'resting',
      'the run to be rested',
      2 * LEASE_SECONDS * 1000 + 20_000,
    );
    console.log(
      `task-run-leases: run rested ${Date.now() - back} ms after the database answered (lease ${LEASE_SECONDS} s)`,
    );
    expect(await runOf(task.id)).toMatchObject({ state: 'resting', lease_owner: null });
    // The task had finished: it stays COMPLETED, and nothing ran again.
    expect((await client.getTask({ id: task.id, tenant: '' })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(model.requests.length).toBe(requests);
  }, 60_000);
});
