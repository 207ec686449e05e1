import { describe, expect, it } from '@jest/globals';
import { CliError } from '../exit-codes.js';
import { captureContent, checkTraceSettings, localServerTraceEnv, tracingWanted } from './settings.js';

describe('tracingWanted', () => {
  it.each([
    [false, {}, false],
    [true, {}, true],
    [false, { OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [false, { OTEL_TRACES_EXPORTER: 'none' }, false],
    [false, { OTEL_TRACES_EXPORTER: ' None , ' }, false],
    [false, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [false, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [false, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }, false],
    [true, { OTEL_SDK_DISABLED: 'TRUE' }, false],
    [false, { OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }, false],
    [true, { OTEL_SDK_DISABLED: 'false' }, true],
  ])('--trace %s with %j: %s', (flag, env, wanted) => {
    expect(tracingWanted(flag, env)).toBe(wanted);
  });
});

describe('checkTraceSettings', () => {
  const problem = (env: NodeJS.ProcessEnv): string | undefined => {
    try {
      checkTraceSettings(env);
      return undefined;
    } catch (err) {
      expect(err).toBeInstanceOf(CliError);
      return (err as CliError).message;
    }
  };

  it('lets the usual settings through', () => {
    expect(
      problem({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example:4318',
      }),
    ).toBeUndefined();
  });

  it.each([
    [{ OTEL_TRACES_EXPORTER: 'console' }, 'OTEL_TRACES_EXPORTER'],
    [{ OTEL_TRACES_EXPORTER: 'otlp,jaeger' }, 'OTEL_TRACES_EXPORTER'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http' }, 'OTEL_EXPORTER_OTLP_PROTOCOL'],
    [{ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'udp' }, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://x' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
  ])('refuses %j, naming %s', (env, name) => {
    expect(problem(env)).toMatch(new RegExp(`^${name} `));
  });
});

describe('localServerTraceEnv', () => {
  it('asks the local server to export with --trace, unless the variables name an exporter or disable it', () => {
    expect(localServerTraceEnv(false, {})).toEqual({});
    expect(localServerTraceEnv(true, {})).toEqual({ OTEL_TRACES_EXPORTER: 'otlp' });
    expect(localServerTraceEnv(true, { OTEL_TRACES_EXPORTER: 'none' })).toEqual({ OTEL_TRACES_EXPORTER: 'otlp' });
    expect(localServerTraceEnv(true, { OTEL_TRACES_EXPORTER: 'zipkin' })).toEqual({});
    expect(localServerTraceEnv(true, { OTEL_SDK_DISABLED: 'true' })).toEqual({});
  });
});

describe('captureContent', () => {
  it('is on only when the GenAI variable says so', () => {
    expect(captureContent({})).toBe(false);
    expect(captureContent({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'false' })).toBe(false);
    expect(captureContent({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'TRUE' })).toBe(true);
  });
});
