import { describe, expect, it } from '@jest/globals';
import { AppConfig } from '../config/app.config.js';
import { ValidationError } from '../common/domain.errors.js';
import { ModelEndpointGuard } from './model-endpoint.guard.js';

const guardWith = (env: Record<string, string>) => new ModelEndpointGuard(AppConfig.fromEnv(env));

async function violation(guard: ModelEndpointGuard, spec: object): Promise<ValidationError> {
  try {
    await guard.assertAdmitted(spec);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected a refusal');
}

describe('ModelEndpointGuard', () => {
  it("admits by default the host and port of CLEVERAGENTS_MODEL_BASE_URL, and the LangGraph server's for graph actors", async () => {
    const guard = guardWith({
      CLEVERAGENTS_MODEL_BASE_URL: 'http://models.internal:8000/v1',
      CLEVERAGENTS_LANGGRAPH_URL: 'https://graphs.internal',
    });
    await expect(guard.assertAdmitted({ model: { baseUrl: 'http://models.internal:8000/other/v1' } })).resolves.toBe(
      undefined,
    );
    await expect(
      guard.assertAdmitted({ graphId: 'g', model: { baseUrl: 'https://graphs.internal/v1' } }),
    ).resolves.toBe(undefined);
    const refused = await violation(guard, {
      localGraph: 'orchestrator',
      model: { baseUrl: 'https://graphs.internal/v1' },
    });
    expect(refused.reason).toBe('MODEL_ENDPOINT_NOT_ALLOWED');
    expect(refused.violations).toEqual([
      { field: 'spec.model.baseUrl', description: expect.stringContaining('CLEVERAGENTS_MODEL_ALLOWED_HOSTS') },
    ]);
    await violation(guard, { model: { baseUrl: 'http://models.internal:8001/v1' } });
  });

  it('admits the hosts of CLEVERAGENTS_MODEL_ALLOWED_HOSTS; an actor without a baseUrl needs nothing', async () => {
    const guard = guardWith({ CLEVERAGENTS_MODEL_ALLOWED_HOSTS: 'vllm:8000, 10.0.0.0/8' });
    await expect(guard.assertAdmitted({ model: { baseUrl: 'http://vllm:8000/v1' } })).resolves.toBeUndefined();
    await expect(guard.assertAdmitted({ model: { baseUrl: 'http://10.0.0.5/v1' } })).resolves.toBeUndefined();
    await expect(guard.assertAdmitted({ localGraph: 'orchestrator' })).resolves.toBeUndefined();
    await violation(guard, { model: { baseUrl: 'http://169.254.169.254/latest/meta-data/' } });
  });

  it('refuses a malformed CLEVERAGENTS_MODEL_ALLOWED_HOSTS entry at boot', () => {
    expect(() => AppConfig.fromEnv({ CLEVERAGENTS_MODEL_ALLOWED_HOSTS: 'http://x/' })).toThrow(
      /CLEVERAGENTS_MODEL_ALLOWED_HOSTS/,
    );
  });
});
