import { ActorBackend, type ActorBackendReadiness } from '../actor-backend.js';
import { ConformanceAgentExecutor } from './conformance.executor.js';

/** `CLEVERAGENTS_ACTOR_BACKEND=conformance`: the deterministic A2A TCK actor; always ready. */
export class ConformanceActorBackend extends ActorBackend {
  readonly name = 'conformance';
  readonly executor: ConformanceAgentExecutor;

  constructor(executor = new ConformanceAgentExecutor()) {
    super();
    this.executor = executor;
  }

  readiness(): ActorBackendReadiness {
    return { ready: true, detail: 'conformance actor (deterministic A2A TCK behaviour; for conformance runs only)' };
  }
}
