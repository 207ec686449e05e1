import { afterEach, describe, expect, it } from '@jest/globals';
import { trace } from '@opentelemetry/api';
import { AIMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { CAPTURE_CONTENT_VARIABLE } from '../../telemetry/content.js';
import { serverTracer } from '../../telemetry/tracing.js';
import {
  endpointOf,
  genAiProvider,
  ToolCallSpan,
  toolType,
  tracedModelCall,
  type ModelCallRecord,
} from './telemetry.js';

/*
 * The orchestrator's spans with no tracer provider registered, the server's default (tracing off): nothing
 * records, so nothing can be exported, whatever the content setting; the metrics' record is still made.
 * Spans with a provider are tested end to end (test/execution/turn-telemetry.e2e-spec.ts).
 */

describe('orchestrator telemetry with no tracer provider (the default)', () => {
  afterEach(() => {
    delete process.env[CAPTURE_CONTENT_VARIABLE];
  });

  it('a model call runs under a span that records nothing, content capture or not; its record is still made', async () => {
    process.env[CAPTURE_CONTENT_VARIABLE] = 'true';
    const records: ModelCallRecord[] = [];
    let active: ReturnType<typeof trace.getActiveSpan>;
    const answer = await tracedModelCall(
      { provider: 'openai', model: 'm', serverAddress: 'models.internal', serverPort: 443 },
      [new SystemMessage('be brief'), new HumanMessage('my password is hunter2')],
      () => {
        active = trace.getActiveSpan();
        return Promise.resolve(
          new AIMessage({
            content: 'ok',
            usage_metadata: { input_tokens: 7, output_tokens: 2, total_tokens: 9 },
          }),
        );
      },
      (record) => records.push(record),
    );
    expect(answer.content).toBe('ok');
    // No context manager either: no span is even active, and the tracer's spans are the API's no-op ones.
    expect(active?.isRecording() ?? false).toBe(false);
    expect(active === undefined || !trace.isSpanContextValid(active.spanContext())).toBe(true);
    const span = serverTracer().startSpan('probe');
    expect(span.isRecording()).toBe(false);
    expect(trace.isSpanContextValid(span.spanContext())).toBe(false);
    expect(records).toEqual([
      expect.objectContaining({ inputTokens: 7, outputTokens: 2, target: expect.objectContaining({ model: 'm' }) }),
    ]);
  });

  it('a failed model call is rethrown as it was, and recorded with its error type', async () => {
    const records: ModelCallRecord[] = [];
    class RateLimitError extends Error {
      readonly status = 429;
    }
    await expect(
      tracedModelCall(
        { provider: 'openai', model: 'm' },
        [],
        () => Promise.reject(new RateLimitError('slow down, key sk-1')),
        (record) => records.push(record),
      ),
    ).rejects.toBeInstanceOf(RateLimitError);
    expect(records).toEqual([expect.objectContaining({ errorType: 'RateLimitError' })]);
  });

  it('a tool call span records nothing, and its context carries no valid span', () => {
    const span = new ToolCallSpan('call-1', 'fs_read_text_file', 'client', () => true, { path: 'a' });
    span.open();
    expect(trace.getSpan(span.context())?.isRecording() ?? false).toBe(false);
    span.finish('ok', { result: { content: 'x' } });
  });
});

describe('orchestrator telemetry names', () => {
  it('the provider is openai for every OpenAI-compatible endpoint, azure.ai.openai for Azure', () => {
    expect(['openai', 'vllm', 'ollama', 'openai-compatible', undefined, null].map(genAiProvider)).toEqual(
      Array(6).fill('openai'),
    );
    expect(genAiProvider('azure-openai')).toBe('azure.ai.openai');
  });

  it("an endpoint's address and port, the scheme's port when it names none", () => {
    expect(endpointOf('http://127.0.0.1:8000/v1')).toEqual({ serverAddress: '127.0.0.1', serverPort: 8000 });
    expect(endpointOf('https://api.openai.com/v1')).toEqual({ serverAddress: 'api.openai.com', serverPort: 443 });
    expect(endpointOf('http://[::1]/v1')).toEqual({ serverAddress: '::1', serverPort: 80 });
    expect(endpointOf(undefined)).toEqual({});
    expect(endpointOf('not a url')).toEqual({});
  });

  it('tool types: a client-side tool is a function, what the agent side runs an extension', () => {
    expect([toolType('client'), toolType('server'), toolType('agent'), toolType(undefined)]).toEqual([
      'function',
      'extension',
      'extension',
      'extension',
    ]);
  });
});
