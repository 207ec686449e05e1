import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { AppConfig } from '../config/app.config.js';
import { ConfigModule } from '../config/config.module.js';
import { ActorBackends } from './actor-backends.js';
import { ConformanceAgentExecutor } from './conformance/conformance.executor.js';
import { ExecutionModule } from './execution.module.js';

describe('ExecutionModule', () => {
  it('provides the backends CLEVERAGENTS_ACTOR_BACKEND names: conformance runs every task on the TCK actor', async () => {
    const config = AppConfig.fromEnv({ CLEVERAGENTS_ACTOR_BACKEND: 'conformance' });
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), ExecutionModule],
    }).compile();

    const backends = moduleRef.get(ActorBackends);

    expect(backends.name).toBe('conformance');
    expect(backends.conformance).toBeInstanceOf(ConformanceAgentExecutor);
    expect(backends.readiness()).toEqual({ ready: true, detail: expect.stringContaining('conformance') });
    await moduleRef.close();
  });
});
