import { describe, expect, it } from '@jest/globals';
import { Global, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { SECRET_KEY_BYTES, SecretBox } from '../common/secret-box.js';
import { AppConfig } from '../config/app.config.js';
import { ConfigModule } from '../config/config.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { ActorBackends } from './actor-backends.js';
import type { ActorDefinition } from './actor-turn.js';
import { ConformanceAgentExecutor } from './conformance/conformance.executor.js';
import { ExecutionModule } from './execution.module.js';

/** The backends are only built here, never run: no query reaches this placeholder. */
@Global()
@Module({
  providers: [
    { provide: DataSource, useValue: {} },
    { provide: SecretBox, useValue: new SecretBox([randomBytes(SECRET_KEY_BYTES)]) },
  ],
  exports: [DataSource, SecretBox],
})
class NoDatabaseModule {}

const localActor: ActorDefinition = { name: 'default', localGraph: 'orchestrator', tools: [] };
const remoteActor: ActorDefinition = { name: 'reviewer', graphId: 'code-review', tools: [] };
const agentActor: ActorDefinition = { name: 'helper', a2a: { url: 'https://agent.example' }, tools: [] };

/** The backends as the application's injector builds them for this environment. */
async function backendsFor(env: Record<string, string>): Promise<ActorBackends> {
  const config = AppConfig.fromEnv(env);
  const moduleRef = await Test.createTestingModule({
    imports: [ConfigModule.forRoot(config), NoDatabaseModule, MetricsModule, ExecutionModule],
  }).compile();
  return moduleRef.get(ActorBackends);
}

function chosen(backends: ActorBackends, actor: ActorDefinition): string {
  const choice = backends.forActor(actor);
  return 'backend' in choice ? choice.backend.name : `problem: ${choice.problem}`;
}

describe('ExecutionModule: which backend runs which actor (CLEVERAGENTS_ACTOR_BACKEND and the actor)', () => {
  it('conformance: every task goes to the TCK actor, always ready', async () => {
    const backends = await backendsFor({ CLEVERAGENTS_ACTOR_BACKEND: 'conformance' });
    expect(backends.name).toBe('conformance');
    expect(backends.conformance).toBeInstanceOf(ConformanceAgentExecutor);
    expect(backends.readiness()).toEqual({ ready: true, detail: expect.stringContaining('conformance') });
  });

  it('none: no backend at all, always ready; an actor cannot run and the problem names the setting', async () => {
    const backends = await backendsFor({ CLEVERAGENTS_ACTOR_BACKEND: 'none' });
    expect(backends.name).toBe('none');
    expect(backends.conformance).toBeUndefined();
    expect(backends.runsOrchestrators).toBe(false);
    expect(backends.byName('local')).toBeUndefined();
    expect(backends.readiness()).toEqual({ ready: true, detail: expect.stringContaining('runs no actors') });
    expect(chosen(backends, localActor)).toMatch(/^problem: .*CLEVERAGENTS_ACTOR_BACKEND=none/);
    expect(chosen(backends, remoteActor)).toMatch(/^problem: .*CLEVERAGENTS_ACTOR_BACKEND=none/);
    expect(chosen(backends, agentActor)).toMatch(/^problem: .*CLEVERAGENTS_ACTOR_BACKEND=none/);
  });

  it('local without a model: starts, not ready, and the detail names the settings to set', async () => {
    const backends = await backendsFor({});
    expect(backends.name).toBe('local');
    expect(backends.conformance).toBeUndefined();
    expect(chosen(backends, localActor)).toBe('local');
    // An external A2A agent runs on its own backend, whatever the configured one (and recovers by its name).
    expect(chosen(backends, agentActor)).toBe('a2a');
    expect(backends.byName('a2a')?.name).toBe('a2a');
    const readiness = backends.readiness();
    expect(readiness.ready).toBe(false);
    expect(readiness.detail).toMatch(/CLEVERAGENTS_MODEL_BASE_URL/);
    expect(readiness.detail).toMatch(/CLEVERAGENTS_MODEL\b/);
  });

  it('local: an actor naming a graphId needs a LangGraph server, and says which setting is missing', async () => {
    expect(chosen(await backendsFor({}), remoteActor)).toMatch(/^problem: .*CLEVERAGENTS_LANGGRAPH_URL/);
    const both = await backendsFor({
      CLEVERAGENTS_MODEL_BASE_URL: 'http://127.0.0.1:9/v1',
      CLEVERAGENTS_MODEL: 'llama',
      CLEVERAGENTS_LANGGRAPH_URL: 'http://127.0.0.1:9',
    });
    expect(chosen(both, remoteActor)).toBe('langgraph');
    expect(chosen(both, localActor)).toBe('local');
  });

  it('langgraph: every actor runs remotely, a local graph under its own name; the URL is required', async () => {
    const backends = await backendsFor({
      CLEVERAGENTS_ACTOR_BACKEND: 'langgraph',
      CLEVERAGENTS_LANGGRAPH_URL: 'http://127.0.0.1:9',
    });
    expect(chosen(backends, localActor)).toBe('langgraph');
    expect(chosen(backends, remoteActor)).toBe('langgraph');
    expect(chosen(backends, agentActor)).toBe('a2a');
    expect(() => AppConfig.fromEnv({ CLEVERAGENTS_ACTOR_BACKEND: 'langgraph' })).toThrow(/CLEVERAGENTS_LANGGRAPH_URL/);
  });
});
