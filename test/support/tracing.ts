// Tracing inside the test process: the SDK's tracer provider with an in-memory exporter, registered as the
// global one, so that server code run in process (Nest applications, backends, the client library) records
// real spans that a test reads back. For a server or CLI in a child process, see otlp-receiver.ts.
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';

export interface TestTracing {
  /** Every span ended so far, in the order they ended. */
  spans(): ReadableSpan[];
  /** The ended spans with this name. */
  named(name: string): ReadableSpan[];
  /** The one ended span with this name (fails the test when there are none or several). */
  only(name: string): ReadableSpan;
  /** Forgets the spans ended so far. */
  reset(): void;
  /** Unregisters the provider (afterAll). */
  stop(): Promise<void>;
}

/** Registers an in-memory tracer provider (always sampling) for this test file; call `stop()` in afterAll. */
export function startTestTracing(): TestTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  trace.setGlobalTracerProvider(provider);
  return {
    spans: () => exporter.getFinishedSpans(),
    named: (name) => exporter.getFinishedSpans().filter((s) => s.name === name),
    only: (name) => {
      const spans = exporter.getFinishedSpans().filter((s) => s.name === name);
      if (spans.length !== 1) {
        throw new Error(
          `expected one span named ${name}, found ${spans.length}: ${spans.map((s) => s.name).join(', ')}`,
        );
      }
      return spans[0];
    },
    reset: () => exporter.reset(),
    stop: async () => {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** The id of a span's parent; undefined for a root span. */
export function parentSpanId(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** Everything a span holds that a peer could have written (name, attribute values, events, status, links), as text. */
export function spanText(span: ReadableSpan): string {
  return JSON.stringify([span.name, span.attributes, span.events, span.status, span.links]);
}
