import type { AgentExecutor } from '@a2a-js/sdk/server';

/** What /readyz and `_cleveragents/diagnostics/*` report about an actor backend. */
export interface ActorBackendReadiness {
  ready: boolean;
  detail: string;
}

/**
 * The port through which every A2A task is run (SPEC.md §5). The a2a wiring hands `executor` to the
 * SDK's `DefaultRequestHandler`; health and diagnostics read `name` and `readiness()`.
 *
 * One adapter per `CLEVERAGENTS_ACTOR_BACKEND` value, chosen once at boot by `ExecutionModule`:
 * - `conformance` (now): a deterministic actor keyed by `messageId` prefix, for the A2A TCK only.
 * - `local` (later): an in-process LangGraph.js orchestrator graph over an OpenAI-compatible endpoint,
 *   with a PostgreSQL checkpointer.
 * - `langgraph` (later): a remote LangGraph Platform / Agent Server through @langchain/langgraph-sdk
 *   (contextId ↔ thread, task ↔ run, interrupt ↔ `input-required`, CancelTask ↔ run cancel).
 *
 * Adapters own their runs: `executor.cancelTask` must stop the run and publish a final `canceled`
 * status on the bus it is given.
 */
export abstract class ActorBackend {
  /** The configuration value that selected this backend, e.g. `conformance`. */
  abstract readonly name: string;
  /** The SDK executor that runs tasks on this backend. */
  abstract readonly executor: AgentExecutor;
  /** Cheap and synchronous: may be called by a load balancer's probe on every request. */
  abstract readiness(): ActorBackendReadiness;
}
