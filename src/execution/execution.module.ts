import { Global, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app.config.js';
import { ActorBackends } from './actor-backends.js';
import { ConformanceAgentExecutor } from './conformance/conformance.executor.js';

/**
 * Builds the actor backends the configuration asks for (SPEC.md §5). The LangChain/LangGraph modules are
 * loaded only for the backends in use (a large module graph: most of a cold start when loaded for nothing).
 */
export async function createActorBackends(config: AppConfig, dataSource: DataSource): Promise<ActorBackends> {
  if (config.actorBackend === 'conformance') {
    return new ActorBackends(config.actorBackend, { conformance: new ConformanceAgentExecutor() });
  }
  // One after the other: the two share modules, and Jest's ESM loader fails on a module two concurrent
  // dynamic imports both link ("not in cache").
  const { LocalActorBackend } = await import('./local/local.backend.js');
  // Wherever actors may run remotely: every actor with `langgraph`, those naming a graphId with `local`.
  const langgraph = config.langgraph ? await import('./langgraph/langgraph.backend.js') : undefined;
  return new ActorBackends(config.actorBackend, {
    // In process, on the server's own database (checkpoints).
    local: new LocalActorBackend(dataSource, config),
    langgraph: langgraph ? new langgraph.LangGraphActorBackend(config) : undefined,
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
