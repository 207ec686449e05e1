import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ulid } from '../common/ulid.js';
import { ResourceNotFoundError } from '../common/domain.errors.js';
import { checkRevision } from '../common/revision.js';
import {
  decodePageToken,
  invalidPageToken,
  pageOf,
  pageSizeOf,
  type Page,
  type PageRequest,
} from '../common/paging.js';
import { DEFAULT_ACTOR } from '../registry/registry.builtins.js';
import { RegistryService } from '../registry/registry.service.js';
import type { ActorDefinition } from '../execution/actor-turn.js';
import type { StoreScope } from '../database/store-scope.js';
import type { BudgetUsage, SessionBudget, SessionStatus } from './session.entity.js';
import { holdersOf, requireBudgetLeft } from './budgets.js';
import {
  invalidContextId,
  sessionAlreadyClosed,
  sessionBusy,
  sessionClosed,
  sessionNotFound,
  unknownDefinition,
} from './session.errors.js';
import { SessionRepository } from './session.repository.js';
import { sessionTitleOf } from './session-title.js';
import { AuditLog } from '../audit/audit-log.service.js';
import type { Gate } from '../execution/orchestrator/protocol.js';
import type { ApprovalTimeout, HistoryTask, SessionView } from '@cleveragents/contract';

/** The profile a session runs under when neither it nor its actor names one. */
export const DEFAULT_PROFILE = 'supervised';

/** An automation profile's gates and budget (docs/protocol.md §5). */
export interface AutomationProfile {
  name: string;
  gate: Gate;
  allowedTools: readonly string[];
  /** `supervised`: the tools a client may let run without asking for its own tasks. */
  clientMayAllow: readonly string[];
  budget?: SessionBudget;
  /** How long its gates wait for an answer, and what then (docs/plans.md#approval-timeouts). */
  approvalTimeout?: ApprovalTimeout;
}

/** What `session.gates` records of a task's gate request. */
export interface GateRecord {
  taskId: string;
  profile: string;
  allowed: string[];
  refused: string[];
  asked: string[];
}

/** The limits of a profile's budget this server counts (tokens, tool calls, wall time). */
function pickBudget(budget: SessionBudget): SessionBudget {
  const picked: SessionBudget = {};
  if (budget.tokens !== undefined) picked.tokens = budget.tokens;
  if (budget.toolCalls !== undefined) picked.toolCalls = budget.toolCalls;
  if (budget.wallTimeSeconds !== undefined) picked.wallTimeSeconds = budget.wallTimeSeconds;
  return picked;
}

/** Whose sessions: the same (namespace, owner) scope as tasks (docs/protocol.md §4). */
export type SessionScope = StoreScope;

/** A session as `_cleveragents/session/*` shows it: the contract's. */
export type { SessionView };

export interface CreateSessionInput {
  actor?: string;
  profile?: string;
  title?: string;
  budget?: SessionBudget;
}

const HISTORY_LIST = 'session/history';
/** A contextId a client chooses: printable, of a sane length (it is a key and appears in logs). */
const CONTEXT_ID_PATTERN = /^[\x21-\x7e]{1,256}$/;

/**
 * Sessions (docs/protocol.md §6.4): an A2A context with its actor, profile and budget. A session starts with
 * `session/create`, or with a SendMessage that names no contextId or one this scope has not used;
 * a closed session takes no new message.
 */
@Injectable()
export class SessionService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repository: SessionRepository,
    private readonly registry: RegistryService,
    private readonly audit: AuditLog,
  ) {}

  async create(scope: SessionScope, input: CreateSessionInput): Promise<SessionView> {
    const actor = input.actor ?? DEFAULT_ACTOR;
    // Both must exist now: a session naming a definition nobody has would only fail at its first turn.
    await this.requireDefinition(scope.namespace, 'actor', actor, 'actor');
    if (input.profile !== undefined) await this.requireDefinition(scope.namespace, 'profile', input.profile, 'profile');
    return this.repository.insert(scope, {
      id: ulid(),
      actor,
      profile: input.profile ?? null,
      title: input.title ?? null,
      budget: input.budget ?? null,
    });
  }

  async get(scope: SessionScope, sessionId: string): Promise<SessionView> {
    const session = await this.repository.find(scope, sessionId);
    if (!session) throw sessionNotFound(scope, sessionId);
    return session;
  }

  async list(scope: SessionScope, query: PageRequest & { status?: SessionStatus }): Promise<Page<SessionView>> {
    return this.repository.list(scope, query);
  }

  /**
   * Closes an open session. Refused (-32004 SESSION_BUSY) while one of its tasks is submitted,
   * working or waiting for input: cancel those first, so that nothing is left half done.
   */
  async close(scope: SessionScope, sessionId: string, expectedRevision?: number): Promise<SessionView> {
    return this.dataSource.transaction(async (manager) => {
      const session = await this.repository.lock(manager, scope, sessionId);
      if (!session) throw sessionNotFound(scope, sessionId);
      checkRevision('Session', sessionId, session.revision, expectedRevision);
      if (session.status === 'closed') {
        throw sessionAlreadyClosed(sessionId, session.status);
      }
      const busy = await this.repository.unfinishedTaskIds(manager, scope, sessionId);
      if (busy.length > 0) {
        throw sessionBusy(sessionId, busy);
      }
      return this.repository.markClosed(manager, scope, sessionId);
    });
  }

  /** Renames a session (null: no title), audited as `session.update`; REVISION_CONFLICT on a stale revision. */
  async update(
    scope: SessionScope,
    sessionId: string,
    title: string | null,
    expectedRevision?: number,
  ): Promise<SessionView> {
    return this.dataSource.transaction(async (manager) => {
      const session = await this.repository.lock(manager, scope, sessionId);
      if (!session) throw sessionNotFound(scope, sessionId);
      checkRevision('Session', sessionId, session.revision, expectedRevision);
      const updated = await this.repository.retitle(manager, scope, sessionId, title);
      await this.audit.record(manager, {
        namespace: scope.namespace,
        actor: scope.owner,
        action: 'session.update',
        target: `session/${sessionId}`,
        details: { sessionId, owner: scope.owner, title, revision: updated.revision },
      });
      return updated;
    });
  }

  /** A session without a title takes one from its first message's text (sessionTitleOf), if it has any. */
  async titleFromMessage(scope: SessionScope, session: SessionView, text: string): Promise<void> {
    if (session.title !== null) return;
    const title = sessionTitleOf(text);
    if (title !== undefined) await this.repository.titleIfNone(scope, session.sessionId, title);
  }

  /** The session's tasks, oldest first, each whole (its messages in `history`, its artifacts). */
  async history(scope: SessionScope, sessionId: string, page: PageRequest): Promise<Page<HistoryTask>> {
    const pageSize = pageSizeOf(page);
    const cursor = decodePageToken(HISTORY_LIST, page.pageToken, 2);
    if (cursor && Number.isNaN(Date.parse(cursor[0]))) throw invalidPageToken();
    if (!(await this.repository.find(scope, sessionId))) throw sessionNotFound(scope, sessionId);
    const { rows, totalSize } = await this.repository.history(scope, sessionId, cursor, pageSize);
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
   * session's row is written with the task's first save: the trigger `TRG_tasks_sessions` on `tasks`
   * (see SessionRepository).
   */
  async admit(scope: SessionScope, contextId: string | undefined): Promise<string> {
    // A new context costs no round trip: its session row is made with its first task, in the same
    // statement, by the trigger TRG_tasks_sessions of the SessionsAndTaskRuns migration.
    if (contextId === undefined) return ulid();
    if (!CONTEXT_ID_PATTERN.test(contextId)) {
      throw invalidContextId();
    }
    const session = await this.repository.openOrCreate(scope, contextId, DEFAULT_ACTOR);
    if (session.status === 'closed') throw sessionClosed(contextId);
    await this.requireBudgetLeft(scope, session);
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
    const spec = entry.spec as {
      gate?: Gate;
      allowedTools?: string[];
      clientMayAllow?: string[];
      budget?: SessionBudget;
      approvalTimeout?: ApprovalTimeout | null;
    };
    return {
      name: entry.name,
      gate: spec.gate ?? 'manual',
      allowedTools: spec.allowedTools ?? [],
      clientMayAllow: spec.clientMayAllow ?? [],
      budget: spec.budget ? pickBudget(spec.budget) : undefined,
      ...(spec.approvalTimeout
        ? {
            approvalTimeout: {
              seconds: spec.approvalTimeout.seconds,
              onTimeout: spec.approvalTimeout.onTimeout ?? 'deny',
            },
          }
        : {}),
    };
  }

  /** The session a turn runs in, created if a task's context has none (tasks older than sessions). */
  async forTurn(scope: SessionScope, contextId: string): Promise<SessionView> {
    return this.repository.openOrCreate(scope, contextId, DEFAULT_ACTOR);
  }

  /**
   * Records the gates a client asked a task of the session to run under (`session.gates`): what it let
   * run and was granted, what its profile refused, what it wants asked about.
   */
  async recordGates(scope: SessionScope, contextId: string, details: GateRecord): Promise<void> {
    await this.dataSource.transaction((manager) =>
      this.audit.record(manager, {
        namespace: scope.namespace,
        actor: scope.owner,
        action: 'session.gates',
        target: `session/${contextId}`,
        details: { sessionId: contextId, owner: scope.owner, ...details },
      }),
    );
  }

  /** Adds what a turn used to the session's count. */
  async addUsage(scope: SessionScope, contextId: string, delta: BudgetUsage): Promise<void> {
    await this.repository.addUsage(scope, contextId, delta);
  }

  /** The actor definition a session's turns run with, as the registry holds it now. */
  async actorOf(scope: SessionScope, session: SessionView): Promise<ActorDefinition> {
    const stored = await this.registry.storedSpec({ namespace: scope.namespace, kind: 'actor', name: session.actor });
    const spec = stored as Omit<ActorDefinition, 'name' | 'tools'> & { tools?: string[] };
    return {
      name: session.actor,
      graphId: spec.graphId,
      localGraph: spec.localGraph,
      a2a: spec.a2a,
      model: spec.model,
      systemPrompt: spec.systemPrompt,
      profile: session.profile ?? spec.profile,
      tools: spec.tools ?? [],
    };
  }

  /**
   * The external A2A agents among `names` (an actor's `tools`): the actors of the namespace with `a2a`,
   * as stored. Names that are no such actor are left out (tools, skills, or nothing yet).
   */
  async agentsOf(scope: SessionScope, names: readonly string[]): Promise<ActorDefinition[]> {
    const found: ActorDefinition[] = [];
    for (const name of new Set(names)) {
      const stored = await this.registry
        .storedSpec({ namespace: scope.namespace, kind: 'actor', name })
        .catch((err: unknown) => {
          if (err instanceof ResourceNotFoundError) return undefined;
          throw err;
        });
      const spec = stored as { a2a?: ActorDefinition['a2a']; description?: string } | undefined;
      if (spec?.a2a) found.push({ name, a2a: spec.a2a, description: spec.description, tools: [] });
    }
    return found;
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
      throw unknownDefinition(field, kind, name, namespace);
    }
    throw err;
  }
}
