import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { AppConfig } from '../config/app.config.js';
import { ConfigModule } from '../config/config.module.js';
import { ActorBackend } from './actor-backend.js';
import { ConformanceActorBackend } from './conformance/conformance.backend.js';
import { ConformanceAgentExecutor } from './conformance/conformance.executor.js';
import { ExecutionModule } from './execution.module.js';

describe('ExecutionModule', () => {
  it('provides the actor backend CLEVERAGENTS_ACTOR_BACKEND names', async () => {
    const config = AppConfig.fromEnv({ CLEVERAGENTS_ACTOR_BACKEND: 'conformance' });
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), ExecutionModule],
    }).compile();

    const backend = moduleRef.get(ActorBackend);

    expect(backend).toBeInstanceOf(ConformanceActorBackend);
    expect(backend.name).toBe('conformance');
    expect(backend.executor).toBeInstanceOf(ConformanceAgentExecutor);
    expect(backend.readiness()).toEqual({ ready: true, detail: expect.stringContaining('conformance') });
    await moduleRef.close();
  });
});
