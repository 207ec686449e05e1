import { Global, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app.config.js';
import { ActorBackends } from './actor-backends.js';
import { ConformanceAgentExecutor } from './conformance/conformance.executor.js';

/** Builds the actor backends the configuration asks for (SPEC.md §5). */
export function createActorBackends(config: AppConfig): ActorBackends {
  return new ActorBackends(config.actorBackend, {
    conformance: config.actorBackend === 'conformance' ? new ConformanceAgentExecutor() : undefined,
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
