import type { ActorBackendName } from '../config/app.config.js';
import type { ActorBackendReadiness, ActorDefinition, TurnBackend } from './actor-turn.js';
import type { ConformanceAgentExecutor } from './conformance/conformance.executor.js';

/** Which backend runs an actor, or why none can. */
export type BackendChoice = { backend: TurnBackend } | { problem: string };

/**
 * The actor backends this server has (SPEC.md §5), and the one `CLEVERAGENTS_ACTOR_BACKEND` names:
 * - `conformance`: every task goes to the deterministic A2A TCK actor, whatever the session's actor.
 * - `local`: actors run in process over the configured model, except those naming a remote `graphId`,
 *   which run on the LangGraph server when one is configured.
 * - `langgraph`: every actor runs on the LangGraph server: its `graphId`, or the graph named like its
 *   `localGraph` (a deployment of the same orchestrator).
 */
export class ActorBackends {
  constructor(
    readonly name: ActorBackendName,
    private readonly backends: {
      local?: TurnBackend & Partial<Lifecycle>;
      langgraph?: TurnBackend & Partial<Lifecycle>;
      conformance?: ConformanceAgentExecutor;
    },
  ) {}

  /** The TCK actor, when the server runs in conformance mode. */
  get conformance(): ConformanceAgentExecutor | undefined {
    return this.name === 'conformance' ? this.backends.conformance : undefined;
  }

  /** A backend by the name a task run recorded (recovery after a restart). */
  byName(name: string): TurnBackend | undefined {
    if (name === 'local') return this.backends.local;
    if (name === 'langgraph') return this.backends.langgraph;
    return undefined;
  }

  forActor(actor: ActorDefinition): BackendChoice {
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

  /** The configured backend's readiness (and the LangGraph server's, when actors may run there). */
  readiness(): ActorBackendReadiness {
    if (this.name === 'conformance') {
      return { ready: true, detail: 'conformance actor (deterministic A2A TCK behaviour; for conformance runs only)' };
    }
    const main = this.name === 'langgraph' ? this.backends.langgraph : this.backends.local;
    if (!main) return { ready: false, detail: `the ${this.name} backend is not available` };
    const own = main.readiness();
    const remote = this.name === 'local' ? this.backends.langgraph?.readiness() : undefined;
    if (!remote) return own;
    return {
      ready: own.ready && remote.ready,
      detail: `local: ${own.detail}; langgraph (actors with a graphId): ${remote.detail}`,
    };
  }

  async start(): Promise<void> {
    await this.backends.local?.start?.();
    await this.backends.langgraph?.start?.();
  }

  async stop(): Promise<void> {
    await this.backends.langgraph?.stop?.();
    await this.backends.local?.stop?.();
  }
}

interface Lifecycle {
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
}
