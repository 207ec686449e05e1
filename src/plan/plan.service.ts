import { Injectable } from '@nestjs/common';
import type { StoreScope } from '../database/store-scope.js';
import { DataSource, type EntityManager } from 'typeorm';
import { ulid } from 'ulid';
import { AuditLog } from '../audit/audit-log.service.js';
import type { Acting } from '../common/actor.js';
import { ResourceNotFoundError, ValidationError } from '../common/domain.errors.js';
import { checkRevision } from '../common/revision.js';
import { readNewestFirstPage, type Page, type PageRequest } from '../common/paging.js';
import { RegistryService } from '../registry/registry.service.js';
import type { SessionBudget } from '../session/session.entity.js';
import { requireDefinition, SessionService } from '../session/session.service.js';
import type { PlanEntry, PlanEntryPriority, PlanEntryStatus } from './plan.entity.js';
import { transition, type PlanOperation, type PlanStatus } from './plan.states.js';

/** Whose plans: the same (namespace, owner) scope as tasks and sessions (SPEC.md §4). */
export type PlanScope = StoreScope;

/** A plan as `_cleveragents/plan/*` shows it. */
export interface PlanView {
  planId: string;
  namespace: string;
  owner: string;
  sessionId: string | null;
  goal: string;
  entries: PlanEntry[];
  profile: string | null;
  budget: SessionBudget | null;
  status: PlanStatus;
  revision: number;
  taskId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** `plan/status`: where a plan is, without its text. */
export interface PlanStatusView {
  planId: string;
  status: PlanStatus;
  revision: number;
  entries: { total: number; pending: number; inProgress: number; completed: number; failed: number; skipped: number };
  taskId: string | null;
}

/** An entry as given: priority and status may be left out. */
export interface PlanEntryInput {
  content: string;
  priority?: PlanEntryPriority;
  status?: PlanEntryStatus;
}

export interface CreatePlanInput {
  sessionId?: string;
  goal: string;
  entries?: PlanEntryInput[];
  profile?: string;
  budget?: SessionBudget;
}

/** What `plan/update` replaces; what is absent stays. */
export interface UpdatePlanInput {
  goal?: string;
  entries?: PlanEntryInput[];
  profile?: string;
  budget?: SessionBudget;
}

interface PlanRow {
  namespace: string;
  owner: string;
  id: string;
  session_id: string | null;
  goal: string;
  entries: PlanEntry[];
  profile: string | null;
  budget: SessionBudget | null;
  status: PlanStatus;
  revision: number;
  task_id: string | null;
  created_seq: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `namespace, owner, id, session_id, goal, entries, profile, budget, status, revision, task_id,
  created_seq, created_at, updated_at`;
const PLAN_LIST = 'plan/list';

function toView(row: PlanRow): PlanView {
  return {
    planId: row.id,
    namespace: row.namespace,
    owner: row.owner,
    sessionId: row.session_id,
    goal: row.goal,
    entries: row.entries,
    profile: row.profile,
    budget: row.budget,
    status: row.status,
    revision: row.revision,
    taskId: row.task_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function entriesOf(entries: PlanEntryInput[]): PlanEntry[] {
  return entries.map((e) => ({ content: e.content, priority: e.priority ?? 'medium', status: e.status ?? 'pending' }));
}

export function planNotFound(scope: PlanScope, planId: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`Plan not found: ${planId} (in namespace ${scope.namespace})`, 'PLAN_NOT_FOUND', {
    planId,
    namespace: scope.namespace,
  });
}

/**
 * Plans (SPEC.md §6.5), without their execution: a goal and its entries, a profile and a budget, made
 * as a draft, edited while draft or paused, approved, paused, resumed, canceled, deleted. Every change
 * bumps the revision and is audited in its own transaction; the states allowed are those of
 * plan.states.ts and nowhere else.
 */
@Injectable()
export class PlanService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly registry: RegistryService,
    private readonly sessions: SessionService,
    private readonly audit: AuditLog,
  ) {}

  async create(scope: PlanScope, input: CreatePlanInput, by: Acting): Promise<PlanView> {
    if (input.sessionId !== undefined) await this.requireOpenSession(scope, input.sessionId);
    if (input.profile !== undefined)
      await requireDefinition(this.registry, scope.namespace, 'profile', input.profile, 'profile');
    return this.dataSource.transaction(async (manager) => {
      const rows: PlanRow[] = await manager.query(
        `INSERT INTO plans (namespace, owner, id, session_id, goal, entries, profile, budget)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8::jsonb) RETURNING ${COLUMNS}`,
        [
          scope.namespace,
          scope.owner,
          ulid(),
          input.sessionId ?? null,
          input.goal,
          JSON.stringify(entriesOf(input.entries ?? [])),
          input.profile ?? null,
          input.budget ? JSON.stringify(input.budget) : null,
        ],
      );
      const plan = toView(rows[0]);
      await this.record(manager, scope, by, 'plan.create', plan, { status: plan.status });
      return plan;
    });
  }

  async get(scope: PlanScope, planId: string): Promise<PlanView> {
    const rows: PlanRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM plans WHERE namespace = $1 AND owner = $2 AND id = $3`,
      [scope.namespace, scope.owner, planId],
    );
    if (!rows[0]) throw planNotFound(scope, planId);
    return toView(rows[0]);
  }

  async status(scope: PlanScope, planId: string): Promise<PlanStatusView> {
    const plan = await this.get(scope, planId);
    const count = (status: PlanEntryStatus) => plan.entries.filter((e) => e.status === status).length;
    return {
      planId: plan.planId,
      status: plan.status,
      revision: plan.revision,
      entries: {
        total: plan.entries.length,
        pending: count('pending'),
        inProgress: count('in_progress'),
        completed: count('completed'),
        failed: count('failed'),
        skipped: count('skipped'),
      },
      taskId: plan.taskId,
    };
  }

  async list(
    scope: PlanScope,
    query: PageRequest & { status?: PlanStatus; sessionId?: string },
  ): Promise<Page<PlanView>> {
    return readNewestFirstPage<PlanRow, PlanView>(this.dataSource, {
      list: PLAN_LIST,
      columns: COLUMNS,
      from: 'plans',
      where: [
        ['namespace = $?', scope.namespace],
        ['owner = $?', scope.owner],
        query.status ? ['status = $?', query.status] : undefined,
        query.sessionId ? ['session_id = $?', query.sessionId] : undefined,
      ],
      page: query,
      toItem: toView,
    });
  }

  /** Replaces what `input` gives, while the plan is draft or paused. */
  async update(
    scope: PlanScope,
    planId: string,
    input: UpdatePlanInput,
    expectedRevision: number | undefined,
    by: Acting,
  ): Promise<PlanView> {
    if (input.profile !== undefined)
      await requireDefinition(this.registry, scope.namespace, 'profile', input.profile, 'profile');
    return this.change(scope, planId, 'update', expectedRevision, by, {
      goal: input.goal,
      entries: input.entries ? entriesOf(input.entries) : undefined,
      profile: input.profile,
      budget: input.budget,
    });
  }

  /** `approve`, `pause`, `resume` or `cancel`: moves the plan as plan.states.ts allows. */
  transition(
    scope: PlanScope,
    planId: string,
    operation: 'approve' | 'pause' | 'resume' | 'cancel',
    expectedRevision: number | undefined,
    by: Acting,
  ): Promise<PlanView> {
    return this.change(scope, planId, operation, expectedRevision, by, {});
  }

  /** Deletes a plan that is not executing or paused (cancel it first). */
  async delete(
    scope: PlanScope,
    planId: string,
    expectedRevision: number | undefined,
    by: Acting,
  ): Promise<{ planId: string; deleted: true }> {
    return this.dataSource.transaction(async (manager) => {
      const row = await this.lock(manager, scope, planId);
      checkRevision('Plan', planId, row.revision, expectedRevision);
      transition(planId, row.status, 'delete');
      await manager.query('DELETE FROM plans WHERE namespace = $1 AND owner = $2 AND id = $3', [
        scope.namespace,
        scope.owner,
        planId,
      ]);
      await this.record(manager, scope, by, 'plan.delete', toView(row), { status: row.status });
      return { planId, deleted: true as const };
    });
  }

  private change(
    scope: PlanScope,
    planId: string,
    operation: PlanOperation,
    expectedRevision: number | undefined,
    by: Acting,
    patch: { goal?: string; entries?: PlanEntry[]; profile?: string; budget?: SessionBudget },
  ): Promise<PlanView> {
    return this.dataSource.transaction(async (manager) => {
      const row = await this.lock(manager, scope, planId);
      checkRevision('Plan', planId, row.revision, expectedRevision);
      const next = transition(planId, row.status, operation);
      // An UPDATE's RETURNING comes back from TypeORM as [rows, count]; a CTE's SELECT as rows.
      const updated: PlanRow[] = await manager.query(
        `WITH changed AS (
           UPDATE plans SET status = $4, goal = COALESCE($5, goal), entries = COALESCE($6::jsonb, entries),
             profile = COALESCE($7, profile), budget = COALESCE($8::jsonb, budget),
             revision = revision + 1, updated_at = now()
           WHERE namespace = $1 AND owner = $2 AND id = $3 RETURNING ${COLUMNS})
         SELECT * FROM changed`,
        [
          scope.namespace,
          scope.owner,
          planId,
          next,
          patch.goal ?? null,
          patch.entries ? JSON.stringify(patch.entries) : null,
          patch.profile ?? null,
          patch.budget ? JSON.stringify(patch.budget) : null,
        ],
      );
      const plan = toView(updated[0]);
      const details: Record<string, unknown> =
        operation === 'update'
          ? { changed: Object.keys(patch).filter((k) => patch[k as keyof typeof patch] !== undefined) }
          : { from: row.status, to: next };
      await this.record(manager, scope, by, `plan.${operation}`, plan, details);
      return plan;
    });
  }

  private async lock(manager: EntityManager, scope: PlanScope, planId: string): Promise<PlanRow> {
    const rows: PlanRow[] = await manager.query(
      `SELECT ${COLUMNS} FROM plans WHERE namespace = $1 AND owner = $2 AND id = $3 FOR UPDATE`,
      [scope.namespace, scope.owner, planId],
    );
    if (!rows[0]) throw planNotFound(scope, planId);
    return rows[0];
  }

  private record(
    manager: EntityManager,
    scope: PlanScope,
    by: Acting,
    action: string,
    plan: PlanView,
    details: Record<string, unknown>,
  ): Promise<void> {
    return this.audit.record(manager, {
      namespace: scope.namespace,
      actor: by.actor.subject,
      action: action as `plan.${string}`,
      target: `plan/${plan.planId}`,
      details: { planId: plan.planId, owner: scope.owner, revision: plan.revision, ...details },
      requestId: by.requestId,
    });
  }

  /** `sessionId` must name an open session of the caller: else -32602 on `sessionId`. */
  private async requireOpenSession(scope: PlanScope, sessionId: string): Promise<void> {
    let status: string;
    try {
      status = (await this.sessions.get(scope, sessionId)).status;
    } catch (err) {
      if (err instanceof ResourceNotFoundError && err.reason === 'SESSION_NOT_FOUND') {
        throw new ValidationError([
          { field: 'sessionId', description: `no session ${sessionId} of yours in namespace ${scope.namespace}` },
        ]);
      }
      throw err;
    }
    if (status !== 'open') {
      throw new ValidationError([
        { field: 'sessionId', description: `session ${sessionId} is closed: a plan needs an open session` },
      ]);
    }
  }
}
