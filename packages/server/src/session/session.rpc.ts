import type { StoreScope } from '../database/store-scope.js';
import { CallerScope, RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { METHODS } from '@cleveragents/contract';
import { ActorBackends } from '../execution/actor-backends.js';
import type {
  AssembleContextParams,
  AssembledContextView,
  CloseSessionParams,
  CreateSessionParams,
  ListSessionsParams,
  SessionHistoryPage,
  SessionHistoryParams,
  SessionKeyParams,
  SessionPage,
  SessionView,
  UpdateSessionParams,
} from '@cleveragents/contract';
import { limitsOf } from './budgets.js';
import { actorBackendUnavailable, noModelContext } from './session.errors.js';
import { SessionService } from './session.service.js';

/**
 * `_cleveragents/session/*` and `_cleveragents/context/assemble` (docs/protocol.md §6.4). A session is an A2A
 * context of its owner: another caller, even an admin of the namespace, does not see it (-32001), as
 * with tasks.
 */
@RpcHandlers()
export class SessionRpc {
  constructor(
    private readonly sessions: SessionService,
    private readonly backends: ActorBackends,
  ) {}

  @RpcMethod(METHODS.session.create, {
    role: 'member',
    errors: ['REGISTRY_ENTRY_NOT_FOUND'],
    description: 'Start a session (an A2A context) with an actor, profile, title and budget; returns its sessionId',
  })
  create(params: CreateSessionParams, @CallerScope() scope: StoreScope): Promise<SessionView> {
    return this.sessions.create(scope, {
      actor: params.actor ?? undefined,
      profile: params.profile ?? undefined,
      title: params.title ?? undefined,
      budget: limitsOf(params.budget),
    });
  }

  @RpcMethod(METHODS.session.get, {
    role: 'viewer',
    errors: ['SESSION_NOT_FOUND'],
    description: 'One of your sessions by sessionId (= contextId)',
  })
  get(params: SessionKeyParams, @CallerScope() scope: StoreScope): Promise<SessionView> {
    return this.sessions.get(scope, params.sessionId);
  }

  @RpcMethod(METHODS.session.list, {
    role: 'viewer',
    errors: ['INVALID_PAGE_TOKEN'],
    description: 'Your sessions in a namespace, newest first, optionally only open or closed ones',
  })
  list(params: ListSessionsParams, @CallerScope() scope: StoreScope): Promise<SessionPage> {
    return this.sessions.list(scope, {
      status: params.status ?? undefined,
      pageSize: params.pageSize,
      pageToken: params.pageToken,
    });
  }

  @RpcMethod(METHODS.session.close, {
    role: 'member',
    errors: ['SESSION_NOT_FOUND', 'REVISION_CONFLICT', 'INVALID_TRANSITION', 'SESSION_BUSY'],
    description: 'Close a session (refused while it has unfinished tasks); it then takes no new message',
  })
  close(params: CloseSessionParams, @CallerScope() scope: StoreScope): Promise<SessionView> {
    return this.sessions.close(scope, params.sessionId, params.expectedRevision ?? undefined);
  }

  @RpcMethod(METHODS.session.update, {
    role: 'member',
    errors: ['SESSION_NOT_FOUND', 'REVISION_CONFLICT'],
    description: "Rename a session (title null: none); a session's first message titles it when it has no title",
  })
  update(params: UpdateSessionParams, @CallerScope() scope: StoreScope): Promise<SessionView> {
    return this.sessions.update(scope, params.sessionId, params.title, params.expectedRevision ?? undefined);
  }

  @RpcMethod(METHODS.session.history, {
    role: 'viewer',
    errors: ['SESSION_NOT_FOUND', 'INVALID_PAGE_TOKEN'],
    description: "A session's tasks, oldest first, each with its messages and artifacts",
  })
  history(params: SessionHistoryParams, @CallerScope() scope: StoreScope): Promise<SessionHistoryPage> {
    return this.sessions.history(scope, params.sessionId, {
      pageSize: params.pageSize,
      pageToken: params.pageToken,
    });
  }

  @RpcMethod(METHODS.context.assemble, {
    role: 'viewer',
    errors: ['SESSION_NOT_FOUND', 'NO_MODEL_CONTEXT', 'ACTOR_BACKEND_UNAVAILABLE'],
    description: "Exactly what the session's orchestrator would send to its model next (diagnostics)",
  })
  async assemble(params: AssembleContextParams, @CallerScope() scope: StoreScope): Promise<AssembledContextView> {
    const session = await this.sessions.get(scope, params.sessionId);
    if (this.backends.conformance) {
      throw noModelContext(session.sessionId);
    }
    const actor = await this.sessions.actorOf(scope, session);
    const choice = this.backends.forActor(actor);
    if ('problem' in choice) {
      throw actorBackendUnavailable(actor.name, choice.problem);
    }
    const assembled = await choice.backend.assemble({
      contextId: session.sessionId,
      namespace: scope.namespace,
      owner: scope.owner,
      actor,
      maxTokens: params.maxTokens ?? undefined,
    });
    return { sessionId: session.sessionId, actor: actor.name, backend: choice.backend.name, ...assembled };
  }
}
