import { Global, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app.config.js';
import { ActorBackends } from './actor-backends.js';
import { ConformanceAgentExecutor } from './conformance/conformance.executor.js';
import { LangGraphActorBackend } from './langgraph/langgraph.backend.js';

/** Builds the actor backends the configuration asks for (SPEC.md §5). */
export function createActorBackends(config: AppConfig): ActorBackends {
  return new ActorBackends(config.actorBackend, {
    conformance: config.actorBackend === 'conformance' ? new ConformanceAgentExecutor() : undefined,
    // Wherever actors may run remotely: every actor with `langgraph`, those naming a graphId with `local`.
    langgraph:
      config.langgraph && config.actorBackend !== 'conformance' ? new LangGraphActorBackend(config) : undefined,
  });
}

/** Provides `ActorBackends` to the whole application; the session workflow runs turns on them. */
@Global()
@Module({
  providers: [{ provide: ActorBackends, useFactory: createActorBackends, inject: [AppConfig] }],
  exports: [ActorBackends],
})
export class ExecutionModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(private readonly backends: ActorBackends) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.backends.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.backends.stop();
  }
}
