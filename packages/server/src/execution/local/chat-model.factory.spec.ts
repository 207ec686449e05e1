import { describe, expect, it } from '@jest/globals';
import { AppConfig } from '../../config/app.config.js';
import { describeModelError, modelReadiness, resolveModelSettings, type ModelSettings } from './chat-model.factory.js';

function modelConfig(env: Record<string, string>): AppConfig['model'] {
  return AppConfig.fromEnv({ NODE_ENV: 'test', CLEVERAGENTS_ACTOR_BACKEND: 'conformance', ...env }).model;
}

const SERVER = {
  CLEVERAGENTS_MODEL_BASE_URL: 'http://vllm.internal:8000/v1',
  CLEVERAGENTS_MODEL: 'llama-3.1-8b',
  CLEVERAGENTS_MODEL_API_KEY: 'sk-server-key',
};
const actor = { name: 'default', tools: [] };

describe('resolveModelSettings', () => {
  it("uses the server's endpoint, model and key by default", () => {
    expect(resolveModelSettings(modelConfig(SERVER), actor)).toEqual({
      model: 'llama-3.1-8b',
      baseUrl: 'http://vllm.internal:8000/v1',
      apiKey: 'sk-server-key',
      timeoutMs: 120_000,
      temperature: undefined,
      topP: undefined,
      maxTokens: undefined,
    });
  });

  it("lets an actor choose its model and sampling, keeping the server's key on the server's endpoint", () => {
    const settings = resolveModelSettings(modelConfig(SERVER), {
      ...actor,
      model: { model: 'qwen', temperature: 0.1, topP: 0.9, maxTokens: 256, baseUrl: 'http://vllm.internal:8000/v1/' },
    });
    expect(settings).toMatchObject({
      model: 'qwen',
      temperature: 0.1,
      topP: 0.9,
      maxTokens: 256,
      apiKey: 'sk-server-key',
    });
  });

  it("never hands the server's key to an endpoint an actor names", () => {
    const settings = resolveModelSettings(modelConfig(SERVER), {
      ...actor,
      model: { model: 'x', baseUrl: 'https://elsewhere.example/v1' },
    });
    expect(settings).toMatchObject({ baseUrl: 'https://elsewhere.example/v1', apiKey: undefined });
  });

  it('is undefined unless both an endpoint and a model are known', () => {
    expect(resolveModelSettings(modelConfig({}), actor)).toBeUndefined();
    expect(
      resolveModelSettings(modelConfig({ CLEVERAGENTS_MODEL_BASE_URL: SERVER.CLEVERAGENTS_MODEL_BASE_URL }), actor),
    ).toBeUndefined();
    expect(resolveModelSettings(modelConfig({ CLEVERAGENTS_MODEL: 'm' }), actor)).toBeUndefined();
  });
});

describe('modelReadiness', () => {
  it('names exactly the variables still missing', () => {
    expect(modelReadiness(modelConfig({})).detail).toMatch(/set CLEVERAGENTS_MODEL_BASE_URL and CLEVERAGENTS_MODEL /);
    const onlyModel = modelReadiness(modelConfig({ CLEVERAGENTS_MODEL_BASE_URL: 'http://h:1/v1' }));
    expect(onlyModel).toEqual({
      ready: false,
      detail: expect.stringMatching(/^no model configured: set CLEVERAGENTS_MODEL /),
    });
    expect(modelReadiness(modelConfig(SERVER))).toEqual({
      ready: true,
      detail: 'model llama-3.1-8b at vllm.internal:8000',
    });
  });
});

describe('describeModelError', () => {
  const settings: ModelSettings = {
    model: 'llama',
    baseUrl: 'http://vllm.internal:8000/v1',
    apiKey: 'sk-server-key',
    timeoutMs: 5000,
  };

  it('gives the status, model and host of an HTTP error, never the provider message', () => {
    const error = Object.assign(new Error('401 Incorrect API key provided: sk-server-key'), { status: 401 });
    const reason = describeModelError(error, settings);
    expect(reason).toBe('The model "llama" at vllm.internal:8000 answered HTTP 401: check CLEVERAGENTS_MODEL_API_KEY');
  });

  it('names the socket error of an unreachable endpoint', () => {
    class APIConnectionError extends Error {}
    const error = new APIConnectionError('Connection error.', {
      cause: new TypeError('fetch failed', { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) }),
    });
    expect(describeModelError(error, settings)).toBe(
      'Could not reach the model "llama" at vllm.internal:8000 (ECONNREFUSED): check CLEVERAGENTS_MODEL_BASE_URL',
    );
  });

  it('names the timeout setting when the endpoint is too slow', () => {
    class APIConnectionTimeoutError extends Error {}
    expect(describeModelError(new APIConnectionTimeoutError('Request timed out.'), settings)).toBe(
      'The model "llama" at vllm.internal:8000 did not answer within 5000 ms (CLEVERAGENTS_MODEL_TIMEOUT_MS)',
    );
  });
});
