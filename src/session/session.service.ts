import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ulid } from 'ulid';
import { BusinessRuleViolation, ResourceNotFoundError, ValidationError } from '../common/domain.errors.js';
import { checkRevision } from '../common/revision.js';
import {
  decodePageToken,
  invalidPageToken,
  pageOf,
  pageSizeOf,
  type Page,
  type PageRequest,
} from '../common/paging.js';
import { readKeysetPage, readNewestFirstPage } from '../database/keyset-page.js';
import { DEFAULT_ACTOR } from '../registry/registry.builtins.js';
import { RegistryService } from '../registry/registry.service.js';
import type { ActorDefinition } from '../execution/actor-turn.js';
import type { StoreScope } from '../database/store-scope.js';
import type { BudgetUsage, SessionBudget, SessionStatus } from './session.entity.js';
import { holdersOf, requireBudgetLeft, usageOf } from './budgets.js';
import type { Gate } from '../execution/orchestrator/protocol.js';
import type { HistoryTask, SessionView } from '../contract/methods/session.js';

/** The profile a session runs under when neither it nor its actor names one. */
export const DEFAULT_PROFILE = 'supervised';

/** An automation profile's gates and budget (SPEC.md §5). */
export interface AutomationProfile {
  name: string;
  gate: Gate;
  allowedTools: readonly string[];
  budget?: SessionBudget;
}

/** The limits of a profile's budget this server counts (tokens, tool calls, wall time). */
function pickBudget(budget: SessionBudget): SessionBudget {
  const picked: SessionBudget = {};
  if (budget.tokens !== undefined) picked.tokens = budget.tokens;
  if (budget.toolCalls !== undefined) picked.toolCalls = budget.toolCalls;
  if (budget.wallTimeSeconds !== undefined) picked.wallTimeSeconds = budget.wallTimeSeconds;
  return picked;
}

/** Whose sessions: the same (namespace, owner) scope as tasks (SPEC.md §4). */
export type SessionScope = StoreScope;

/** A session as `_cleveragents/session/*` shows it: the contract's. */
export type { SessionView };

export interface CreateSessionInput {
  actor?: string;
  profile?: string;
  title?: string;
  budget?: SessionBudget;
}

interface SessionRow {
  namespace: string;
  owner: string;
  id: string;
  actor: string;
  profile: string | null;
  title: string | null;
  budget: SessionBudget | null;
  usage: Partial<BudgetUsage> | null;
  status: SessionStatus;
  origin: 'create' | 'message';
  revision: number;
  created_seq: string;
  created_at: Date;
  updated_at: Date;
  closed_at: Date | null;
}

const COLUMNS = `namespace, owner, id, actor, profile, title, budget, usage, status, origin, revision, created_seq,
  created_at, updated_at, closed_at`;
const SESSION_LIST = 'session/list';
const HISTORY_LIST = 'session/history';
/** Tasks that are not done: a session holding one cannot be closed. */
const UNFINISHED_STATES = ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_INPUT_REQUIRED'];
/** A contextId a client chooses: printable, of a sane length (it is a key and appears in logs). */
const CONTEXT_ID_PATTERN = /^[\x21-\x7e]{1,256}$/;

function toView(row: SessionRow): SessionView {
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
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    closedAt: row.closed_at ? row.closed_at.toISOString() : null,
  };
}

export function sessionNotFound(scope: SessionScope, sessionId: string): ResourceNotFoundError {
  return new ResourceNotFoundError(
    `Session not found: ${sessionId} (in namespace ${scope.namespace})`,
    'SESSION_NOT_FOUND',
    { sessionId, namespace: scope.namespace },
  );
}

export function sessionClosed(sessionId: string): BusinessRuleViolation {
  return new BusinessRuleViolation(
    `Session ${sessionId} is closed: start a new session (send a message without contextId) to continue`,
    'SESSION_CLOSED',
    { sessionId },
  );
}

/**
 * Sessions (SPEC.md §6.4): an A2A context with its actor, profile and budget. A session starts with
 * `session/create`, or with a SendMessage that names no contextId or one this scope has not used;
 * a closed session takes no new message.
 */
@Injectable()
export class SessionService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly registry: RegistryService,
  ) {}

  async create(scope: SessionScope, input: CreateSessionInput): Promise<SessionView> {
    const actor = input.actor ?? DEFAULT_ACTOR;
    // Both must exist now: a session naming a definition nobody has would only fail at its first turn.
    await this.requireDefinition(scope.namespace, 'actor', actor, 'actor');
    if (input.profile !== undefined) await this.requireDefinition(scope.namespace, 'profile', input.profile, 'profile');
    const rows: SessionRow[] = await this.dataSource.query(
      `INSERT INTO sessions (namespace, owner, id, actor, profile, title, budget, origin)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, 'create') RETURNING ${COLUMNS}`,
      [
        scope.namespace,
        scope.owner,
        ulid(),
        actor,
        input.profile ?? null,
        input.title ?? null,
        input.budget ? JSON.stringify(input.budget) : null,
      ],
    );
    return toView(rows[0]);
  }

  async get(scope: SessionScope, sessionId: string): Promise<SessionView> {
    const row = await this.find(scope, sessionId);
    if (!row) throw sessionNotFound(scope, sessionId);
    return toView(row);
  }

  async list(scope: SessionScope, query: PageRequest & { status?: SessionStatus }): Promise<Page<SessionView>> {
    return readNewestFirstPage<SessionRow, SessionView>(this.dataSource, {
      list: SESSION_LIST,
      columns: COLUMNS,
      from: 'sessions',
      where: [
        ['namespace = $?', scope.namespace],
        ['owner = $?', scope.owner],
        query.status ? ['status = $?', query.status] : undefined,
      ],
      page: query,
      toItem: toView,
    });
  }

  /**
   * Closes an open session. Refused (-32004 SESSION_BUSY) while one of its tasks is submitted,
   * working or waiting for input: cancel those first, so that nothing is left half done.
   */
  async close(scope: SessionScope, sessionId: string, expectedRevision?: number): Promise<SessionView> {
    return this.dataSource.transaction(async (manager) => {
      const rows: SessionRow[] = await manager.query(
        `SELECT ${COLUMNS} FROM sessions WHERE namespace = $1 AND owner = $2 AND id = $3 FOR UPDATE`,
        [scope.namespace, scope.owner, sessionId],
      );
      const row = rows[0];
      if (!row) throw sessionNotFound(scope, sessionId);
      checkRevision('Session', sessionId, row.revision, expectedRevision);
      if (row.status === 'closed') {
        throw new BusinessRuleViolation(`Session ${sessionId} is already closed`, 'INVALID_TRANSITION', {
          sessionId,
          status: row.status,
        });
      }
      const busy: { id: string }[] = await manager.query(
        `SELECT id FROM tasks WHERE namespace = $1 AND owner = $2 AND context_id = $3 AND state = ANY($4::text[])
         ORDER BY id LIMIT 20`,
        [scope.namespace, scope.owner, sessionId, UNFINISHED_STATES],
      );
      if (busy.length > 0) {
        throw new BusinessRuleViolation(
          `Session ${sessionId} has unfinished tasks (${busy.map((t) => t.id).join(', ')}): cancel them (CancelTask) before closing it`,
          'SESSION_BUSY',
          { sessionId, taskIds: busy.map((t) => t.id).join(',') },
        );
      }
      // An UPDATE's RETURNING comes back from TypeORM as [rows, count]; a CTE's SELECT as rows.
      const updated: SessionRow[] = await manager.query(
        `WITH closed AS (
           UPDATE sessions SET status = 'closed', closed_at = now(), updated_at = now(), revision = revision + 1
           WHERE namespace = $1 AND owner = $2 AND id = $3 RETURNING ${COLUMNS})
         SELECT * FROM closed`,
        [scope.namespace, scope.owner, sessionId],
      );
      return toView(updated[0]);
    });
  }

  /** The session's tasks, oldest first, each whole (its messages in `history`, its artifacts). */
  async history(scope: SessionScope, sessionId: string, page: PageRequest): Promise<Page<HistoryTask>> {
    const pageSize = pageSizeOf(page);
    const cursor = decodePageToken(HISTORY_LIST, page.pageToken, 2);
    if (cursor && Number.isNaN(Date.parse(cursor[0]))) throw invalidPageToken();
    if (!(await this.find(scope, sessionId))) throw sessionNotFound(scope, sessionId);
    const { rows, totalSize } = await readKeysetPage<{ id: string; task: Record<string, unknown>; created: string }>(
      this.dataSource,
      {
        columns: `id, task, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created`,
        from: 'tasks',
        where: [
          ['namespace = $?', scope.namespace],
          ['owner = $?', scope.owner],
          ['context_id = $?', sessionId],
        ],
        after: cursor ? ['(created_at, id) > ($?::timestamptz, $?)', cursor[0], cursor[1]] : undefined,
        orderBy: 'created_at, id',
        pageSize,
      },
    );
    return pageOf(
      rows,
      pageSize,
      totalSize,
      HISTORY_LIST,
      (row) => [row.created, row.id],
      (row) => row.task,
    );
  }

  /**
   * The session a SendMessage goes to, before any task exists: a new one (with a ULID) when the
   * message names no context, the named one when this scope has it, else a new one with that id.
   * A closed session refuses the message (-32004 SESSION_CLOSED). Returns the contextId to use. A new
   * session's row is written with the task's first save (a trigger on `tasks`).
   */
  async admit(scope: SessionScope, contextId: string | undefined): Promise<string> {
    // A new context costs no round trip: its session row is made with its first task, in the same
    // statement, by the `tasks` trigger of the SessionsAndTaskRuns migration.
    if (contextId === undefined) return ulid();
    if (!CONTEXT_ID_PATTERN.test(contextId)) {
      throw new ValidationError([
        {
          field: 'message.contextId',
          description: 'contextId must be 1 to 256 printable ASCII characters without spaces',
        },
      ]);
    }
    const row = await this.openOrCreate(scope, contextId);
    if (row.status === 'closed') throw sessionClosed(contextId);
    await this.requireBudgetLeft(scope, toView(row));
    return contextId;
  }

  /** -32006 when the session has used up a limit of its budget: no new work starts in it. */
  async requireBudgetLeft(scope: SessionScope, session: SessionView): Promise<void> {
    if (session.usage.tokens === 0 && session.usage.toolCalls === 0 && session.usage.wallTimeMs === 0) return;
    const limits = await this.budgetOf(scope, session);
    requireBudgetLeft(holdersOf({ ...session, limits }));
  }

  /** A session's limits: its own budget, else its automation profile's. */
  async budgetOf(scope: SessionScope, session: SessionView): Promise<SessionBudget> {
    if (session.budget) return session.budget;
    const actor = await this.actorOf(scope, session).catch(() => undefined);
    const profile = await this.profileOf(scope, session.profile ?? actor?.profile ?? DEFAULT_PROFILE).catch(
      () => undefined,
    );
    return profile?.budget ?? {};
  }

  /** An automation profile as a turn runs under it (registry kind `profile`). */
  async profileOf(scope: SessionScope, name: string): Promise<AutomationProfile> {
    const entry = await this.registry.get({ namespace: scope.namespace, kind: 'profile', name });
    const spec = entry.spec as { gate?: Gate; allowedTools?: string[]; budget?: SessionBudget };
    return {
      name: entry.name,
      gate: spec.gate ?? 'manual',
      allowedTools: spec.allowedTools ?? [],
      budget: spec.budget ? pickBudget(spec.budget) : undefined,
    };
  }

  /** The session a turn runs in, created if a task's context has none (tasks older than sessions). */
  async forTurn(scope: SessionScope, contextId: string): Promise<SessionView> {
    return toView(await this.openOrCreate(scope, contextId));
  }

  /** Adds what a turn used to the session's count. */
  async addUsage(scope: SessionScope, contextId: string, delta: BudgetUsage): Promise<void> {
    await this.dataSource.query(
      `UPDATE sessions SET usage = jsonb_build_object(
         'tokens', COALESCE((usage->>'tokens')::bigint, 0) + $4,
         'toolCalls', COALESCE((usage->>'toolCalls')::bigint, 0) + $5,
         'wallTimeMs', COALESCE((usage->>'wallTimeMs')::bigint, 0) + $6)
       WHERE namespace = $1 AND owner = $2 AND id = $3`,
      [scope.namespace, scope.owner, contextId, delta.tokens, delta.toolCalls, Math.round(delta.wallTimeMs)],
    );
  }

  /** The actor definition a session's turns run with, as the registry holds it now. */
  async actorOf(scope: SessionScope, session: SessionView): Promise<ActorDefinition> {
    const entry = await this.registry.get({ namespace: scope.namespace, kind: 'actor', name: session.actor });
    const spec = entry.spec as Omit<ActorDefinition, 'name' | 'tools'> & { tools?: string[] };
    return {
      name: entry.name,
      graphId: spec.graphId,
      localGraph: spec.localGraph,
      model: spec.model,
      systemPrompt: spec.systemPrompt,
      profile: session.profile ?? spec.profile,
      tools: spec.tools ?? [],
    };
  }

  /** The session `contextId` of this scope, made (by a message, with the default actor) if it has none. */
  private async openOrCreate(scope: SessionScope, contextId: string): Promise<SessionRow> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const rows: SessionRow[] = await this.dataSource.query(
        `WITH created AS (
           INSERT INTO sessions (namespace, owner, id, actor, origin) VALUES ($1, $2, $3, $4, 'message')
           ON CONFLICT (namespace, owner, id) DO NOTHING RETURNING ${COLUMNS}
         )
         SELECT ${COLUMNS} FROM created
         UNION ALL
         SELECT ${COLUMNS} FROM sessions WHERE namespace = $1 AND owner = $2 AND id = $3`,
        [scope.namespace, scope.owner, contextId, DEFAULT_ACTOR],
      );
      // Empty only when a concurrent insert of the same id committed after this statement's snapshot.
      if (rows.length > 0) return rows[0];
    }
    throw new Error(`Session ${contextId} could be neither created nor read`);
  }

  private async find(scope: SessionScope, sessionId: string): Promise<SessionRow | undefined> {
    const rows: SessionRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM sessions WHERE namespace = $1 AND owner = $2 AND id = $3`,
      [scope.namespace, scope.owner, sessionId],
    );
    return rows[0];
  }

  private requireDefinition(namespace: string, kind: 'actor' | 'profile', name: string, field: string): Promise<void> {
    return requireDefinition(this.registry, namespace, kind, name, field);
  }
}

/**
 * Refuses (-32602 on `field`) a registry name nothing in the namespace answers to: a session or plan
 * naming a definition nobody has would only fail when it runs.
 */
export async function requireDefinition(
  registry: RegistryService,
  namespace: string,
  kind: 'actor' | 'profile',
  name: string,
  field: string,
): Promise<void> {
  try {
    await registry.get({ namespace, kind, name });
  } catch (err) {
    if (err instanceof ResourceNotFoundError && err.reason === 'REGISTRY_ENTRY_NOT_FOUND') {
      throw new ValidationError([
        { field, description: `no ${kind} named "${name}" in namespace ${namespace} (see registry/list)` },
      ]);
    }
    throw err;
  }
}
