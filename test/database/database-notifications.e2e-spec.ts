/**
 * A channel's listening connection on PostgreSQL: NOTIFY from several callers at once, with the heartbeat
 * beating meanwhile, reaches the channel whole, one query at a time on the connection.
 */
import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import pg from 'pg';
import { PostgresSubscription } from '../../packages/server/src/database/database-notifications.js';
import { ifAssigned } from '../support/assigned.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { describeNeeding, runningPostgres } from '../support/requirements.js';
import { until } from '../support/wait.js';

describeNeeding(runningPostgres(), 'a listening connection on PostgreSQL', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await ifAssigned(db)?.cleanup();
  });

  it('sends concurrent notifications and heartbeats one at a time, and hears every notification', async () => {
    // How many queries the connection has under way at once: node-postgres queues a query sent while
    // another runs, warns, and its next major refuses it.
    const running = { now: 0, most: 0, sent: 0 };
    const query = Reflect.get(pg.Client.prototype, 'query') as (...args: unknown[]) => Promise<unknown>;
    const spy = jest.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args) {
      running.sent++;
      running.most = Math.max(running.most, ++running.now);
      const answer = query.apply(this, args);
      void answer.then(
        () => running.now--,
        () => running.now--,
      );
      return answer as never;
    });
    const heard: string[] = [];
    const subscription = await PostgresSubscription.open(
      db.env.DATABASE_URL,
      'concurrent_notify_test',
      { notify: (payload) => heard.push(payload), reset: () => undefined },
      // A heartbeat every millisecond: one is always under way while the notifications are sent.
      { heartbeatMs: 1, timeoutMs: 20_000, retryMinMs: 100, retryMaxMs: 1_000 },
      new Logger('test'),
    );
    try {
      expect(subscription.live).toBe(true);
      const payloads = Array.from({ length: 60 }, (_, n) => `payload ${n}`);
      await Promise.all(payloads.map((payload) => subscription.notify(payload)));
      await until(() => heard.length >= payloads.length, 'every notification to come back');
      expect([...heard].sort()).toEqual([...payloads].sort());
      expect(running.sent).toBeGreaterThan(payloads.length);
      expect(running.most).toBe(1);
      expect(subscription.live).toBe(true);
    } finally {
      await subscription.close();
      spy.mockRestore();
    }
  });
});
