import { Inject, Injectable } from '@nestjs/common';
import { AppConfig, type ActorBackendName } from '../config/app.config.js';
import type {
  ActorBackendReadiness,
  ActorDefinition,
  ActorTurn,
  AssembledContext,
  AssembleRequest,
  TurnBackend,
  TurnBackendName,
  TurnResult,
} from './actor-turn.js';
import { ConformanceAgentExecutor } from './conformance/conformance.executor.js';
import type { AgentCallResult } from './orchestrator/protocol.js';
import { NO_ACTOR_BACKEND } from './execution.errors.js';

/** A backend ActorBackends holds: a TurnBackend, started and stopped with the application if it says how. */
abstract class HeldBackend implements TurnBackend {
  abstract readonly name: TurnBackendName;
  abstract readiness(): ActorBackendReadiness;
  /** readiness() checked against the backend's server itself, when it has one to ask (cached by the backend). */
  probe?(): Promise<ActorBackendReadiness>;
  abstract run(turn: ActorTurn): Promise<TurnResult>;
  abstract assemble(session: AssembleRequest): Promise<AssembledContext>;
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}

/** The `local` backend (actors in process), provided unless the server runs in conformance mode. */
export abstract class InProcessBackend extends HeldBackend {}

/** The backend over the LangGraph server, provided when one is configured (CLEVERAGENTS_LANGGRAPH_URL). */
export abstract class LangGraphServerBackend extends HeldBackend {}

/** The backend of actors that are external A2A agents (`spec.a2a`), provided wherever actors run. */
export abstract class ExternalAgentBackend extends HeldBackend {
  /** One call of `agent` as a sub-agent of `parent`'s turn: `message` in, its answer and artifacts out. */
  abstract ask(parent: ActorTurn, agent: ActorDefinition, message: string, callId: string): Promise<AgentCallResult>;
  /** Cancels the agent's task `remoteTaskId` (a task of ours that waited on it ended); failures are logged. */
  abstract cancelWaiting(namespace: string, agent: ActorDefinition, remoteTaskId: string): Promise<void>;
}

/** Which backend runs an actor, or why none can. */
export type BackendChoice = { backend: TurnBackend } | { problem: string };

/**
 * The actor backends this server has (docs/protocol.md §5) and the one CLEVERAGENTS_ACTOR_BACKEND
 * names (docs/execution.md#which-backend-runs-an-actor).
 */
@Injectable()
export class ActorBackends {
  readonly name: ActorBackendName;
  private readonly backends: {
    local?: InProcessBackend;
    langgraph?: LangGraphServerBackend;
    a2a?: ExternalAgentBackend;
    conformance?: ConformanceAgentExecutor;
  };

  constructor(
    config: AppConfig,
    // Each is null where the configuration does not use it (ExecutionModule's factories).
    @Inject(InProcessBackend) local: InProcessBackend | null,
    @Inject(LangGraphServerBackend) langgraph: LangGraphServerBackend | null,
    @Inject(ConformanceAgentExecutor) conformance: ConformanceAgentExecutor | null,
    @Inject(ExternalAgentBackend) a2a: ExternalAgentBackend | null,
  ) {
    this.name = config.actorBackend;
    this.backends = {
      local: local ?? undefined,
      langgraph: langgraph ?? undefined,
      a2a: a2a ?? undefined,
      conformance: conformance ?? undefined,
    };
  }

  /** The TCK actor, when the server runs in conformance mode. */
  get conformance(): ConformanceAgentExecutor | undefined {
    return this.name === 'conformance' ? this.backends.conformance : undefined;
  }

  /** Whether plans can run here: an orchestrator backend, not the TCK actor nor none. */
  get runsOrchestrators(): boolean {
    return this.name === 'local' || this.name === 'langgraph';
  }

  /** Cancels an external agent's waiting task (nothing when the a2a backend is not there). */
  async cancelWaiting(namespace: string, agent: ActorDefinition, remoteTaskId: string): Promise<void> {
    await this.backends.a2a?.cancelWaiting(namespace, agent, remoteTaskId);
  }

  /** A backend by the name a task run recorded (recovery after a restart). */
  byName(name: string): TurnBackend | undefined {
    if (name === 'local') return this.backends.local;
    if (name === 'langgraph') return this.backends.langgraph;
    if (name === 'a2a') return this.backends.a2a;
    return undefined;
  }

  forActor(actor: ActorDefinition): BackendChoice {
    if (this.name === 'none') return { problem: `Actor ${actor.name} cannot run: ${NO_ACTOR_BACKEND}` };
    if (actor.a2a) {
      if (this.backends.a2a) return { backend: this.backends.a2a };
      return { problem: `Actor ${actor.name} is an external A2A agent, but the a2a backend is not available` };
    }
    const remote = actor.graphId !== undefined || this.name === 'langgraph';
    if (remote) {
      if (this.backends.langgraph) return { backend: this.backends.langgraph };
      return {
        problem:
          `Actor ${actor.name} runs on a LangGraph server (graphId ${actor.graphId ?? actor.localGraph}), ` +
          'but none is configured: set CLEVERAGENTS_LANGGRAPH_URL (and CLEVERAGENTS_LANGGRAPH_API_KEY if it needs one)',
      };
    }
    if (this.backends.local) return { backend: this.backends.local };
    return { problem: `Actor ${actor.name} runs in process, but the local backend is not available` };
  }

  /**
   * What /readyz reports: the readiness below, with the `local` model endpoint's reachability (probed at
   * most once per cache period, whatever the number of calls).
   */
  async check(): Promise<ActorBackendReadiness> {
    const local = this.name === 'local' ? await this.backends.local?.probe?.() : undefined;
    return local ? this.withRemote(local) : this.readiness();
  }

  /** The configured backend's readiness (and the LangGraph server's, when actors may run there). */
  readiness(): ActorBackendReadiness {
    if (this.name === 'conformance') {
      return { ready: true, detail: 'conformance actor (deterministic A2A TCK behaviour; for conformance runs only)' };
    }
    if (this.name === 'none') {
      return {
        ready: true,
        detail:
          'none: this server runs no actors (CLEVERAGENTS_ACTOR_BACKEND=none: registry, sync and namespaces only)',
      };
    }
    const main = this.name === 'langgraph' ? this.backends.langgraph : this.backends.local;
    if (!main) return { ready: false, detail: `the ${this.name} backend is not available` };
    return this.name === 'local' ? this.withRemote(main.readiness()) : main.readiness();
  }

  /** The local backend's readiness with the LangGraph server's, when actors with a graphId may run there. */
  private withRemote(own: ActorBackendReadiness): ActorBackendReadiness {
    const remote = this.backends.langgraph?.readiness();
    if (!remote) return own;
    return {
      ready: own.ready && remote.ready,
      detail: `local: ${own.detail}; langgraph (actors with a graphId): ${remote.detail}`,
    };
  }

  async start(): Promise<void> {
    await this.backends.local?.start?.();
    await this.backends.langgraph?.start?.();
    await this.backends.a2a?.start?.();
  }

  async stop(): Promise<void> {
    this.backends.conformance?.stop();
    await this.backends.a2a?.stop?.();
    await this.backends.langgraph?.stop?.();
    await this.backends.local?.stop?.();
  }
}
