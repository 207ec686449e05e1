import { afterEach, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { StdioClient } from '../support/stdio-client.js';
import { ifAssigned } from '../support/assigned.js';
import { until } from '../support/wait.js';

/** pino's numeric levels; the server writes their labels. */
const LEVELS: Readonly<Partial<Record<string, number>>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
};

/** The JSON log lines of `text` (the bootstrap key's notice box and other plain lines are skipped). */
function logLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The lines of level warn (40) or above. */
function warnings(text: string): Record<string, unknown>[] {
  return logLines(text).filter((line) => {
    const level = typeof line.level === 'number' ? line.level : LEVELS[String(line.level)];
    return level === undefined || level >= 40;
  });
}

/** How the server's listening connections name themselves (listenerApplicationName). */
const LISTENERS = 'cleveragents-server:listen:%';

const WHOAMI = { jsonrpc: '2.0', id: 1, method: '_cleveragents/auth/whoami' };
/** A task: its events go to the push sender, which reads the task's push configs from the database. */
const SEND = {
  jsonrpc: '2.0',
  id: 2,
  method: 'SendMessage',
  params: { message: { messageId: 'shutdown-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] } },
};

/**
 * Local mode ends when its client closes stdin, or on SIGTERM: a normal end, so the process exits 0
 * and logs nothing at warn or above while shutting down. A connection really lost still warns.
 */
describe.each(databaseTargets())('stdio shutdown on $kind', (target) => {
  let db: TestDatabase;
  let stdio: StdioClient;

  afterEach(async () => {
    ifAssigned(stdio)?.kill();
    await ifAssigned(db)?.cleanup();
  });

  /** Starts the stdio server, answers a whoami and a task; returns the stderr offset where serving began. */
  async function serveTwoRequests(): Promise<number> {
    db = await target.create();
    // The local actor with no model, as out of the box: the task fails at once, its events still go to the push sender.
    stdio = StdioClient.start({
      ...db.env,
      CLEVERAGENTS_MIGRATE_ON_START: 'true',
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
    });
    expect(await stdio.request(WHOAMI)).toMatchObject({ id: 1, result: { scheme: 'local' } });
    // Start-up warnings (the bootstrap key minted) are not the shutdown's.
    const served = stdio.stderr.length;
    expect(await stdio.request(SEND)).toMatchObject({ id: 2, result: { task: { id: expect.any(String) } } });
    return served;
  }

  it('stdin closed: exit 0, no warn or error line', async () => {
    const served = await serveTwoRequests();
    expect(await stdio.end()).toBe(0);
    const tail = stdio.stderr.slice(served);
    expect(logLines(tail).map((line) => line.msg)).toContain('shutting down');
    expect(warnings(tail)).toEqual([]);
  }, 90_000);

  it('SIGTERM: exit 0, no warn or error line', async () => {
    const served = await serveTwoRequests();
    expect(await stdio.stop('SIGTERM')).toBe(0);
    const tail = stdio.stderr.slice(served);
    expect(logLines(tail).map((line) => line.msg)).toContain('shutting down');
    expect(warnings(tail)).toEqual([]);
  }, 90_000);

  if (target.kind === 'postgres') {
    it('a listening connection terminated while serving still warns, then stdin closed exits 0', async () => {
      const served = await serveTwoRequests();
      const admin = new pg.Client({ connectionString: db.env.DATABASE_URL });
      await admin.connect();
      const listeners = async (): Promise<number> => {
        const { rows } = await admin.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE $1`,
          [LISTENERS],
        );
        return Number(rows[0].n);
      };
      try {
        const listening = await listeners();
        expect(listening).toBeGreaterThan(0);
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE $1`,
          [LISTENERS],
        );
        const interrupted = (): string[] => warnings(stdio.stderr.slice(served)).map((line) => String(line.msg));
        const expected = [
          /^Identity notifications interrupted/,
          /^Finished-task notifications interrupted/,
          /^Listening for cleveragents_\w+ notifications failed; retrying$/,
        ];
        // Each subscriber hears of the loss in its own time: wait for all three rather than the first.
        await until(
          () => expected.every((pattern) => interrupted().some((msg) => pattern.test(msg))),
          'the caches and the listener to warn of the lost connection',
          30_000,
        );
        expect(interrupted()).toEqual(
          expect.arrayContaining(expected.map((pattern) => expect.stringMatching(pattern))),
        );
        // It reconnects by itself; the shutdown that follows is as quiet as ever.
        await until(async () => (await listeners()) === listening, 'the listeners to reconnect', 30_000);
      } finally {
        await admin.end();
      }
      expect(await stdio.request({ ...WHOAMI, id: 3 })).toMatchObject({ id: 3, result: { scheme: 'local' } });
      const beforeEnd = stdio.stderr.length;
      expect(await stdio.end()).toBe(0);
      expect(warnings(stdio.stderr.slice(beforeEnd))).toEqual([]);
    }, 90_000);
  }
});
