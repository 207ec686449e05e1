import { describe, expect, it } from '@jest/globals';
import { exportersFor, otlpProtocol, telemetryDisabled } from './settings.js';
import { captureContent, contentAttribute, MAX_CONTENT_CHARS } from './content.js';

describe('which signals are exported', () => {
  it('exports nothing by default, unlike the SDK whose default exporter is otlp', () => {
    expect(exportersFor('traces', {})).toEqual([]);
    expect(exportersFor('metrics', {})).toEqual([]);
    expect(exportersFor('traces', { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'x' })).toEqual([]);
  });

  it('exports over OTLP once an endpoint is set, for all signals or for one', () => {
    const all = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(exportersFor('traces', all)).toEqual(['otlp']);
    expect(exportersFor('metrics', all)).toEqual(['otlp']);
    const tracesOnly = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' };
    expect(exportersFor('traces', tracesOnly)).toEqual(['otlp']);
    expect(exportersFor('metrics', tracesOnly)).toEqual([]);
  });

  it('follows the exporter variables: a list, `none`, and OTEL_SDK_DISABLED over everything', () => {
    expect(exportersFor('traces', { OTEL_TRACES_EXPORTER: ' OTLP , console ' })).toEqual(['otlp', 'console']);
    expect(exportersFor('traces', { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c' })).toEqual(
      [],
    );
    const disabled = {
      OTEL_SDK_DISABLED: 'TRUE',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
    };
    expect(telemetryDisabled(disabled)).toBe(true);
    expect(exportersFor('traces', disabled)).toEqual([]);
    expect(exportersFor('metrics', disabled)).toEqual([]);
  });

  it('takes the signal’s own protocol first, then the general one, then http/protobuf', () => {
    expect(otlpProtocol('traces', {})).toBe('http/protobuf');
    expect(otlpProtocol('traces', { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBe('grpc');
    expect(
      otlpProtocol('metrics', {
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json',
      }),
    ).toBe('http/json');
  });
});

describe('content in spans', () => {
  it('is off unless the GenAI capture variable asks for it', () => {
    expect(captureContent({})).toBe(false);
    expect(captureContent({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'false' })).toBe(false);
    expect(captureContent({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'True' })).toBe(true);
    expect(captureContent({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'span_only' })).toBe(true);
  });

  it('never carries a credential, at any depth, and is bounded', () => {
    const text = contentAttribute({
      path: 'notes.md',
      headers: { Authorization: 'Bearer abc', 'X-API-Key': 'k-123' },
      nested: [{ password: 'hunter2', token: 't', keep: 'visible' }],
    });
    expect(text).not.toMatch(/abc|k-123|hunter2|"t"/);
    expect(text).toContain('visible');
    expect(JSON.parse(text)).toEqual({
      path: 'notes.md',
      headers: { Authorization: '[redacted]', 'X-API-Key': '[redacted]' },
      nested: [{ password: '[redacted]', token: '[redacted]', keep: 'visible' }],
    });
    const long = contentAttribute('x'.repeat(MAX_CONTENT_CHARS * 2));
    expect(long.length).toBeLessThan(MAX_CONTENT_CHARS + 20);
    expect(long.endsWith('…[truncated]')).toBe(true);
  });
});
