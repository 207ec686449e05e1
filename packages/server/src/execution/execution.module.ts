import {
  Global,
  Module,
  type DynamicModule,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type Provider,
} from '@nestjs/common';
import type { AppConfig } from '../config/app.config.js';
import { ActorBackends, ExternalAgentBackend, InProcessBackend, LangGraphServerBackend } from './actor-backends.js';
import { ConformanceAgentExecutor } from './conformance/conformance.executor.js';

/**
 * The actor backends the configuration asks for (docs/protocol.md §5). The LangChain/LangGraph modules are
 * loaded only for the backends in use (a large module graph: most of a cold start when loaded for nothing).
 */
async function backendProviders(config: AppConfig): Promise<Provider[]> {
  if (config.actorBackend === 'conformance') return [ConformanceAgentExecutor];
  if (config.actorBackend === 'none') return [];
  // One after the other: the two share modules, and Jest's ESM loader fails on a module two concurrent
  // dynamic imports both link ("not in cache").
  const { LocalActorBackend } = await import('./local/local.backend.js');
  // Wherever actors may run remotely: every actor with `langgraph`, those naming a graphId with `local`.
  const langgraph = config.langgraph ? await import('./langgraph/langgraph.backend.js') : undefined;
  const { A2aAgentBackend } = await import('./a2a/a2a.backend.js');
  return [
    // Actors that are external A2A agents (`spec.a2a`), whichever of the two backends is configured.
    { provide: ExternalAgentBackend, useClass: A2aAgentBackend },
    // In process, on the server's own database (checkpoints).
    { provide: InProcessBackend, useClass: LocalActorBackend },
    ...(langgraph ? [{ provide: LangGraphServerBackend, useClass: langgraph.LangGraphActorBackend }] : []),
  ];
}

/** Provides `ActorBackends` to the whole application; the session workflow runs turns on them. */
@Global()
@Module({})
export class ExecutionModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(private readonly backends: ActorBackends) {}

  static async forRoot(config: AppConfig): Promise<DynamicModule> {
    return {
      module: ExecutionModule,
      providers: [...(await backendProviders(config)), ActorBackends],
      exports: [ActorBackends],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.backends.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.backends.stop();
  }
}
