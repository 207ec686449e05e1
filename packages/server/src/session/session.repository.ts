import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { entityColumns } from '../database/entity-columns.js';
import type { Page, PageRequest } from '../common/paging.js';
import { readKeysetPage, readNewestFirstPage } from '../database/keyset-page.js';
import type { HistoryTask, SessionView } from '@cleveragents/contract';
import type { StoreScope } from '../database/store-scope.js';
import { usageOf } from './budgets.js';
import { SessionEntity, type BudgetUsage, type SessionBudget, type SessionStatus } from './session.entity.js';

const SESSION_LIST = 'session/list';
/** Tasks that are not done: a session holding one cannot be closed. */
const UNFINISHED_STATES = ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_INPUT_REQUIRED'];

/** A session row as the entity maps it. */
type SessionRow = Omit<SessionEntity, 'usage'> & { usage: Partial<BudgetUsage> | null };

/** A stored session as `_cleveragents/session/*` shows it. */
function sessionOf(row: SessionRow): SessionView {
  return {
    sessionId: row.id,
    namespace: row.namespace,
    owner: row.owner,
    actor: row.actor,
    profile: row.profile,
    title: row.title,
    budget: row.budget,
    usage: usageOf(row.usage),
    status: row.status,
    origin: row.origin,
    revision: row.revision,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    closedAt: row.closedAt ? row.closedAt.toISOString() : null,
  };
}

/** One task of a session's history, with the position a page token carries. */
export interface HistoryRow {
  id: string;
  task: HistoryTask;
  /** Its creation time, ISO 8601 to the microsecond, UTC. */
  created: string;
}

/**
 * The `sessions` table (docs/protocol.md §6.4): the only place its SQL lives. A new task's context also gets its
 * row from the trigger `TRG_tasks_sessions` on `tasks` (docs/architecture.md, "Where SQL lives").
 */
@Injectable()
export class SessionRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The columns of a `sessions` row, named as SessionEntity names them: every read yields the entity's shape, and `sessionOf` maps it once. */
  private get columns(): string {
    return entityColumns(this.dataSource, SessionEntity);
  }

  /** A new session made by `session/create`. */
  async insert(
    scope: StoreScope,
    session: { id: string; actor: string; profile: string | null; title: string | null; budget: SessionBudget | null },
  ): Promise<SessionView> {
    const rows: SessionRow[] = await this.dataSource.query(
      `INSERT INTO sessions (namespace, owner, id, actor, profile, title, budget, origin)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, 'create') RETURNING ${this.columns}`,
      [
        scope.namespace,
        scope.owner,
        session.id,
        session.actor,
        session.profile,
        session.title,
        session.budget ? JSON.stringify(session.budget) : null,
      ],
    );
    return sessionOf(rows[0]);
  }

  async find(scope: StoreScope, sessionId: string): Promise<SessionView | undefined> {
    const row = await this.dataSource.manager.findOneBy(SessionEntity, {
      namespace: scope.namespace,
      owner: scope.owner,
      id: sessionId,
    });
    return row ? sessionOf(row) : undefined;
  }

  /** The scope's sessions, newest first, optionally of one status. */
  list(scope: StoreScope, query: PageRequest & { status?: SessionStatus }): Promise<Page<SessionView>> {
    return readNewestFirstPage<SessionRow & { created_seq: string }, SessionView>(this.dataSource, {
      list: SESSION_LIST,
      columns: `${this.columns}, created_seq`,
      from: 'sessions',
      where: [
        ['namespace = $?', scope.namespace],
        ['owner = $?', scope.owner],
        query.status ? ['status = $?', query.status] : undefined,
      ],
      page: query,
      toItem: sessionOf,
    });
  }

  /** The session, locked until `manager`'s transaction ends. */
  async lock(manager: EntityManager, scope: StoreScope, sessionId: string): Promise<SessionView | undefined> {
    const rows: SessionRow[] = await manager.query(
      `SELECT ${this.columns} FROM sessions WHERE namespace = $1 AND owner = $2 AND id = $3 FOR UPDATE`,
      [scope.namespace, scope.owner, sessionId],
    );
    return rows[0] ? sessionOf(rows[0]) : undefined;
  }

  /**
   * Up to `limit` ids of the session's unfinished tasks: submitted, working or waiting for input, and those
   * whose turn runs before the task is stored (a blocking SendMessage's submitted save may wait for the
   * turn's first event: its run record, written at the turn's start, speaks for it).
   */
  async unfinishedTaskIds(manager: EntityManager, scope: StoreScope, sessionId: string, limit = 20): Promise<string[]> {
    const busy: { id: string }[] = await manager.query(
      `SELECT id FROM tasks WHERE namespace = $1 AND owner = $2 AND context_id = $3 AND state = ANY($4::text[])
       UNION
       SELECT r.task_id FROM task_runs r
       WHERE r.namespace = $1 AND r.owner = $2 AND r.context_id = $3 AND r.state = 'running'
         AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.namespace = r.namespace AND t.owner = r.owner AND t.id = r.task_id)
       ORDER BY id LIMIT $5`,
      [scope.namespace, scope.owner, sessionId, UNFINISHED_STATES, limit],
    );
    return busy.map((t) => t.id);
  }

  /** Closes the session (in `manager`'s transaction): its next revision. */
  async markClosed(manager: EntityManager, scope: StoreScope, sessionId: string): Promise<SessionView> {
    // An UPDATE's RETURNING comes back from TypeORM as [rows, count]; a CTE's SELECT as rows.
    const updated: SessionRow[] = await manager.query(
      `WITH closed AS (
         UPDATE sessions SET status = 'closed', closed_at = now(), updated_at = now(), revision = revision + 1
         WHERE namespace = $1 AND owner = $2 AND id = $3 RETURNING ${this.columns})
       SELECT * FROM closed`,
      [scope.namespace, scope.owner, sessionId],
    );
    return sessionOf(updated[0]);
  }

  /** Gives the session `title` (null: none), in `manager`'s transaction: its next revision. */
  async retitle(
    manager: EntityManager,
    scope: StoreScope,
    sessionId: string,
    title: string | null,
  ): Promise<SessionView> {
    const updated: SessionRow[] = await manager.query(
      `WITH retitled AS (
         UPDATE sessions SET title = $4, updated_at = now(), revision = revision + 1
         WHERE namespace = $1 AND owner = $2 AND id = $3 RETURNING ${this.columns})
       SELECT * FROM retitled`,
      [scope.namespace, scope.owner, sessionId, title],
    );
    return sessionOf(updated[0]);
  }

  /** Gives the session `title` if it has none yet (its first message's): bookkeeping, like usage, no revision. */
  async titleIfNone(scope: StoreScope, sessionId: string, title: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE sessions SET title = $4 WHERE namespace = $1 AND owner = $2 AND id = $3 AND title IS NULL`,
      [scope.namespace, scope.owner, sessionId, title],
    );
  }

  /** The session `contextId` of this scope, made (by a message, with `actor`) if it has none. */
  async openOrCreate(scope: StoreScope, contextId: string, actor: string): Promise<SessionView> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const rows: SessionRow[] = await this.dataSource.query(
        `WITH created AS (
           INSERT INTO sessions (namespace, owner, id, actor, origin) VALUES ($1, $2, $3, $4, 'message')
           ON CONFLICT (namespace, owner, id) DO NOTHING RETURNING ${this.columns}
         )
         SELECT * FROM created
         UNION ALL
         SELECT ${this.columns} FROM sessions WHERE namespace = $1 AND owner = $2 AND id = $3`,
        [scope.namespace, scope.owner, contextId, actor],
      );
      // Empty only when a concurrent insert of the same id committed after this statement's snapshot.
      if (rows.length > 0) return sessionOf(rows[0]);
    }
    throw new Error(`Session ${contextId} could be neither created nor read`);
  }

  /** Adds what a turn used to the session's count. */
  async addUsage(scope: StoreScope, sessionId: string, delta: BudgetUsage): Promise<void> {
    await this.dataSource.query(
      `UPDATE sessions SET usage = jsonb_build_object(
         'tokens', COALESCE((usage->>'tokens')::bigint, 0) + $4,
         'toolCalls', COALESCE((usage->>'toolCalls')::bigint, 0) + $5,
         'wallTimeMs', COALESCE((usage->>'wallTimeMs')::bigint, 0) + $6)
       WHERE namespace = $1 AND owner = $2 AND id = $3`,
      [scope.namespace, scope.owner, sessionId, delta.tokens, delta.toolCalls, Math.round(delta.wallTimeMs)],
    );
  }

  /**
   * A keyset page of the session's tasks, oldest first (after `after`, a [created, id] position), and
   * how many it has.
   */
  history(
    scope: StoreScope,
    sessionId: string,
    after: readonly string[] | undefined,
    pageSize: number,
  ): Promise<{ rows: HistoryRow[]; totalSize: number }> {
    return readKeysetPage<HistoryRow>(this.dataSource, {
      columns: `id, task, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created`,
      from: 'tasks',
      where: [
        ['namespace = $?', scope.namespace],
        ['owner = $?', scope.owner],
        ['context_id = $?', sessionId],
      ],
      after: after ? ['(created_at, id) > ($?::timestamptz, $?)', after[0], after[1]] : undefined,
      orderBy: 'created_at, id',
      pageSize,
    });
  }
}
