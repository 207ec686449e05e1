import { Module, type OnApplicationBootstrap, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AppConfig } from '../config/app.config.js';
import { ActorBackends, ExternalAgentBackend, InProcessBackend, LangGraphServerBackend } from './actor-backends.js';
import { ConformanceAgentExecutor } from './conformance/conformance.executor.js';
import { ModelMetrics } from './model-metrics.js';

/** Whether the configuration runs actors (not the TCK actor, not none): then the real backends are loaded. */
function runsActors(config: AppConfig): boolean {
  return config.actorBackend !== 'conformance' && config.actorBackend !== 'none';
}

/**
 * The actor backends the configuration asks for (docs/protocol.md §5), each built by Nest in this module. The
 * LangChain/LangGraph code is imported only for the backends in use (most of a cold start when loaded for
 * nothing), one import after the other (each factory injects the one before): Jest's ESM loader fails on a
 * module two concurrent dynamic imports both link ("not in cache").
 */
const BACKENDS: Provider[] = [
  {
    // Actors that are external A2A agents (`spec.a2a`), whichever of the two backends is configured.
    provide: ExternalAgentBackend,
    inject: [AppConfig, ModuleRef],
    useFactory: async (config: AppConfig, refs: ModuleRef) =>
      runsActors(config) ? refs.create((await import('./a2a/a2a.backend.js')).A2aAgentBackend) : null,
  },
  {
    // In process, on the server's own database (checkpoints); its sub-agents run on the backend above.
    provide: InProcessBackend,
    inject: [AppConfig, ModuleRef, ExternalAgentBackend],
    useFactory: async (config: AppConfig, refs: ModuleRef) =>
      runsActors(config) ? refs.create((await import('./local/local.backend.js')).LocalActorBackend) : null,
  },
  {
    // Wherever actors may run remotely: every actor with `langgraph`, those naming a graphId with `local`.
    provide: LangGraphServerBackend,
    inject: [AppConfig, ModuleRef, InProcessBackend],
    useFactory: async (config: AppConfig, refs: ModuleRef) =>
      runsActors(config) && config.langgraph
        ? refs.create((await import('./langgraph/langgraph.backend.js')).LangGraphActorBackend)
        : null,
  },
  {
    provide: ConformanceAgentExecutor,
    inject: [AppConfig, ModuleRef],
    useFactory: (config: AppConfig, refs: ModuleRef) =>
      config.actorBackend === 'conformance' ? refs.create(ConformanceAgentExecutor) : null,
  },
];

/** `ActorBackends`, for the modules that run turns on them (they import this module). */
@Module({ providers: [...BACKENDS, ActorBackends, ModelMetrics], exports: [ActorBackends] })
export class ExecutionModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(private readonly backends: ActorBackends) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.backends.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.backends.stop();
  }
}
