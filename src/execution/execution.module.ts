import { Global, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app.config.js';
import { ActorBackends } from './actor-backends.js';
import { ConformanceAgentExecutor } from './conformance/conformance.executor.js';
import { LangGraphActorBackend } from './langgraph/langgraph.backend.js';
import { LocalActorBackend } from './local/local.backend.js';

/** Builds the actor backends the configuration asks for (SPEC.md §5). */
export function createActorBackends(config: AppConfig, dataSource: DataSource): ActorBackends {
  return new ActorBackends(config.actorBackend, {
    // In process, on the server's own database (checkpoints): always there but in conformance mode.
    local: config.actorBackend !== 'conformance' ? new LocalActorBackend(dataSource, config) : undefined,
    conformance: config.actorBackend === 'conformance' ? new ConformanceAgentExecutor() : undefined,
    // Wherever actors may run remotely: every actor with `langgraph`, those naming a graphId with `local`.
    langgraph:
      config.langgraph && config.actorBackend !== 'conformance' ? new LangGraphActorBackend(config) : undefined,
  });
}

/** Provides `ActorBackends` to the whole application; the session workflow runs turns on them. */
@Global()
@Module({
  providers: [{ provide: ActorBackends, useFactory: createActorBackends, inject: [AppConfig, DataSource] }],
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
