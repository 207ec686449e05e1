import { Logger } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { openDatabase } from '../../packages/server/src/database/database.startup.js';
import { ENTITIES } from '../../packages/server/src/entities.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The trace_parent columns of task runs and approvals hold a version-00 W3C traceparent or nothing: whatever
 * writes them, anything else (too long, upper case, another version, text smuggled in) is refused by the
 * database, so that what a take-over or a gate's wait links to is always a well-formed span context.
 */

const VALID = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const INVALID = [
  `${VALID}0`,
  VALID.toUpperCase(),
  'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\nevil=1',
  '',
];

describe.each(databaseTargets())('trace_parent columns, on $kind', (target) => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await target.create();
    dataSource = await openDatabase(db.config(), new Logger('trace-parent-columns'), { entities: ENTITIES });
  });

  afterAll(async () => {
    await ifAssigned(dataSource)?.destroy();
    await ifAssigned(db)?.cleanup();
  });

  const insertRun = (taskId: string, traceParent: string | null) =>
    dataSource.query(
      `INSERT INTO task_runs (namespace, owner, task_id, context_id, backend, actor, state, input, remembered, trace_parent)
       VALUES ('ns', 'alice', $1, 'ctx', 'local', '{}', 'running', '{}', '{}', $2)`,
      [taskId, traceParent],
    );
  const insertApproval = (id: string, traceParent: string | null) =>
    dataSource.query(
      `INSERT INTO approvals (namespace, owner, id, session_id, task_id, request_id, subject, subject_hash, options, trace_parent)
       VALUES ('ns', 'alice', $1, 'ctx', $1, 'r', '{}', 'h', '[]', $2)`,
      [id, traceParent],
    );
  /** The SQLSTATE and constraint a refused insert failed with. */
  const refusal = (write: Promise<unknown>) =>
    write.then(
      () => 'stored',
      (error: { driverError?: { code?: string; constraint?: string }; code?: string; constraint?: string }) => {
        const cause = error.driverError ?? error;
        return `${cause.code} ${cause.constraint}`;
      },
    );

  it('store a traceparent or null', async () => {
    await insertRun('t-valid', VALID);
    await insertRun('t-none', null);
    await insertApproval('a-valid', VALID);
    await insertApproval('a-none', null);
    expect(await dataSource.query(`SELECT task_id, trace_parent FROM task_runs ORDER BY task_id`)).toEqual([
      { task_id: 't-none', trace_parent: null },
      { task_id: 't-valid', trace_parent: VALID },
    ]);
    expect(await dataSource.query(`SELECT id, trace_parent FROM approvals ORDER BY id`)).toEqual([
      { id: 'a-none', trace_parent: null },
      { id: 'a-valid', trace_parent: VALID },
    ]);
  });

  it.each(INVALID.map((value) => [JSON.stringify(value), value]))('refuse %s', async (_, value) => {
    expect(await refusal(insertRun(`t-${value}`, value))).toBe('23514 CHK_task_runs_trace_parent');
    expect(await refusal(insertApproval(`a-${value}`, value))).toBe('23514 CHK_approvals_trace_parent');
  });
});
