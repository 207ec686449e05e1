import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../config/app.config.js';
import { ActorBackend } from './actor-backend.js';
import { ConformanceActorBackend } from './conformance/conformance.backend.js';

/** Builds the one actor backend the configuration names (SPEC.md §5). */
export function createActorBackend(config: AppConfig): ActorBackend {
  const name = config.actorBackend;
  switch (name) {
    case 'conformance':
      return new ConformanceActorBackend();
    case 'local':
    case 'langgraph':
      throw new Error(`CLEVERAGENTS_ACTOR_BACKEND=${name}: this backend is being built; use conformance for now`);
    default: {
      const unhandled: never = name;
      throw new Error(`CLEVERAGENTS_ACTOR_BACKEND: no actor backend named "${String(unhandled)}"`);
    }
  }
}

/** Provides `ActorBackend` to the whole application; the a2a wiring reads its `executor`. */
@Global()
@Module({
  providers: [{ provide: ActorBackend, useFactory: createActorBackend, inject: [AppConfig] }],
  exports: [ActorBackend],
})
export class ExecutionModule {}
