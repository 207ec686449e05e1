import { Injectable, Logger } from '@nestjs/common';
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { Extensions } from '@a2a-js/sdk';
import { ContentTypeNotSupportedError, toJsonRpcError } from '@a2a-js/sdk/errors';
import { AppConfig } from '../config/app.config.js';
import { A2aVersionMismatchError } from '../common/domain.errors.js';
import { RequestContext } from '../common/logging/request-context.js';
import { protocolError, rpcErrorOf, RPC_CODES } from '../rpc/rpc-error.mapper.js';
import { parseGuardedJson } from './json-guard.js';
import {
  answerExtension,
  EXTENSION_URI,
  SUPPORTED_EXTENSION_VERSIONS,
  METHOD_ALIASES,
  V03_METHODS,
  V1_METHODS,
} from './protocol-version.js';
import {
  errorOutcome,
  isFailure,
  type DispatchOutcome,
  type InboundCall,
  type JsonRpcId,
  type JsonRpcResponse,
} from './jsonrpc.types.js';
import { checkEnvelope, guardFailureError, pickId } from './jsonrpc-envelope.js';
import { InFlightCalls } from './graceful-shutdown.js';
import { serverTracer, setAttributes, contextFrom } from '../telemetry/tracing.js';
import {
  CA_A2A_VERSION,
  CA_ERROR_REASON,
  CA_NAMESPACE,
  CA_PRINCIPAL,
  CA_REQUEST_ID,
  CA_TRANSPORT,
  ERROR_TYPE,
  RPC_JSONRPC_ERROR_CODE,
  RPC_JSONRPC_ERROR_MESSAGE,
  RPC_JSONRPC_REQUEST_ID,
  RPC_JSONRPC_VERSION,
  RPC_METHOD,
  RPC_SYSTEM,
} from '../telemetry/attributes.js';
import { ExtensionInvoker } from './extension.invoker.js';
import { StandardInvoker } from './standard.invoker.js';

/** Told of every call the dispatcher answered (metrics); the dispatcher itself knows no metrics library. */
export abstract class CallObserver {
  abstract observe(method: string, code: number | 'ok', transport: 'http' | 'stdio', seconds: number): void;
}

const EXTENSION_PREFIX = '_cleveragents/';
const JSON_MEDIA_TYPES = new Set(['application/json', 'application/a2a+json', 'application/json-rpc']);

/**
 * The transport-agnostic JSON-RPC dispatcher: parsing and limits, envelope checks, extension
 * negotiation, then `_cleveragents/*` calls to the ExtensionInvoker (each handler's Nest pipeline) and
 * every standard A2A method to the StandardInvoker (the SDK's own transport handlers). Every call is
 * observed (metrics) and logged once, whatever refused or answered it. HTTP and stdio both call `dispatch`.
 */
@Injectable()
export class JsonRpcDispatcher {
  private readonly logger = new Logger(JsonRpcDispatcher.name);

  constructor(
    private readonly extensions: ExtensionInvoker,
    private readonly standard: StandardInvoker,
    private readonly config: AppConfig,
    private readonly inFlight: InFlightCalls,
    private readonly observer: CallObserver,
  ) {}

  /** HTTP's Content-Type check (stdio has none): anything but JSON is -32005, as the SDK answers. */
  static contentTypeError(contentType: string | undefined): JsonRpcResponse | undefined {
    if (!contentType) return undefined;
    const mediaType = contentType.split(';', 1)[0].trim().toLowerCase();
    if (JSON_MEDIA_TYPES.has(mediaType)) return undefined;
    return {
      jsonrpc: '2.0',
      id: null,
      error: toJsonRpcError(
        new ContentTypeNotSupportedError(`Unsupported Content-Type "${contentType}"; expected application/json.`),
      ),
    };
  }

  /** Answers one inbound message; a stream outcome is open until its events are consumed. */
  dispatch(call: InboundCall): Promise<DispatchOutcome> {
    return this.inFlight.track(this.answer(call));
  }

  /**
   * One SERVER span per call (docs/operations.md, "Traces"), named by the method's metric label (a bounded
   * set), under the caller's trace context: HTTP's `traceparent`/`tracestate` headers, or over stdio the
   * request's top-level `_meta` member. It ends with the answer, or for a stream when the stream ends.
   */
  private async answer(call: InboundCall): Promise<DispatchOutcome> {
    const started = process.hrtime.bigint();
    const parsed = parseGuardedJson(call.body, this.config.maxJsonDepth);
    const parent = contextFrom(this.carrierOf(call, parsed.ok ? parsed.value : undefined));
    const span = serverTracer().startSpan(
      '(invalid)',
      { kind: SpanKind.SERVER, attributes: { [RPC_SYSTEM]: 'jsonrpc', [RPC_JSONRPC_VERSION]: '2.0' } },
      parent,
    );
    if (span.isRecording()) {
      span.setAttributes({ [CA_TRANSPORT]: call.transport, [CA_REQUEST_ID]: call.requestId });
      span.setAttribute(CA_PRINCIPAL, call.principal.subject);
    }
    let outcome: DispatchOutcome;
    try {
      outcome = await context.with(trace.setSpan(parent, span), () => this.answerIn(call, parsed, span, started));
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      throw err;
    }
    if (outcome.kind === 'single') {
      this.endCallSpan(span, outcome.response);
      return outcome;
    }
    return { ...outcome, events: endingWith(outcome.events, span, (last) => this.endCallSpan(span, last)) };
  }

  /** Where the caller's trace context is: HTTP headers; over stdio (no headers) the request's `_meta`. */
  private carrierOf(call: InboundCall, request: unknown): Readonly<Record<string, unknown>> {
    if (call.transport === 'http') return call.headers;
    const meta = typeof request === 'object' && request !== null ? (request as { _meta?: unknown })._meta : undefined;
    return typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {};
  }

  /** Ends a call's span with its outcome: a JSON-RPC error sets the code, its reason and status ERROR. */
  private endCallSpan(span: Span, last: JsonRpcResponse | undefined): void {
    if (span.isRecording() && last && isFailure(last)) {
      const { code, message, data } = last.error;
      const reason = reasonOf(data);
      setAttributes(span, {
        [RPC_JSONRPC_ERROR_CODE]: code,
        [RPC_JSONRPC_ERROR_MESSAGE]: message.slice(0, 500),
        [ERROR_TYPE]: reason ?? String(code),
        [CA_ERROR_REASON]: reason,
      });
      span.setStatus({ code: SpanStatusCode.ERROR, message: message.slice(0, 500) });
    }
    span.end();
  }

  private async answerIn(
    call: InboundCall,
    parsed: ReturnType<typeof parseGuardedJson>,
    span: Span,
    started: bigint,
  ): Promise<DispatchOutcome> {
    let method = '(invalid)';
    const finish = (outcome: DispatchOutcome): DispatchOutcome => {
      if (outcome.kind === 'single') {
        const code = isFailure(outcome.response) ? outcome.response.error.code : 'ok';
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        this.observer.observe(method, code, call.transport, seconds);
        const line = { msg: 'rpc call', code, ms: Math.round(seconds * 1000) };
        if (code === 'ok') this.logger.log(line);
        else this.logger.warn(line);
      } else {
        this.observer.observe(method, 'ok', call.transport, Number(process.hrtime.bigint() - started) / 1e9);
        this.logger.log({ msg: 'rpc stream opened' });
      }
      return outcome;
    };

    if (!parsed.ok) return finish(errorOutcome(null, guardFailureError(parsed.failure)));
    const request = parsed.value;
    if (Array.isArray(request)) {
      return finish(
        errorOutcome(
          null,
          protocolError(RPC_CODES.INVALID_REQUEST, 'Batch requests are not supported', 'BATCH_NOT_SUPPORTED'),
        ),
      );
    }
    const envelopeProblem = checkEnvelope(request);
    const id = pickId(request);
    if (envelopeProblem) {
      return finish(errorOutcome(id, protocolError(RPC_CODES.INVALID_REQUEST, envelopeProblem, 'INVALID_REQUEST')));
    }
    const rpc = request as { method: string; params?: unknown; id?: JsonRpcId };
    method = this.metricLabel(rpc.method);
    RequestContext.assign({ rpcId: id, method: rpc.method.slice(0, 200) });
    const isExtensionMethod = rpc.method.startsWith(EXTENSION_PREFIX);
    if (span.isRecording()) {
      span.updateName(method);
      setAttributes(span, {
        [RPC_METHOD]: method,
        [RPC_JSONRPC_REQUEST_ID]: id === null ? undefined : String(id),
        [CA_A2A_VERSION]: isExtensionMethod ? undefined : a2aVersionOf(rpc.method, call),
        [CA_NAMESPACE]: namespaceOf(rpc.params, isExtensionMethod, call, this.config.defaultNamespace),
      });
    }

    const responseHeaders: Record<string, string> = {};
    try {
      const activated = this.negotiateExtensions(call, isExtensionMethod);
      if (activated.length > 0) responseHeaders['a2a-extensions'] = activated.join(', ');
    } catch (err) {
      return finish(errorOutcome(id, rpcErrorOf(err, this.logger)));
    }

    if (isExtensionMethod) {
      const outcome = await this.extensions.invoke(rpc.method, rpc.params, id, call);
      return finish({ ...outcome, headers: { ...outcome.headers, ...responseHeaders } });
    }
    return finish(await this.standard.invoke(rpc, id, call, responseHeaders));
  }

  /** Metrics and logs label calls by method; only names we serve are used, so the label set is bounded. */
  private metricLabel(name: string): string {
    if (V1_METHODS.has(name) || V03_METHODS.has(name) || METHOD_ALIASES.has(name) || this.extensions.serves(name)) {
      return name;
    }
    return '(unknown)';
  }

  /**
   * The URIs of our extension the client activated, each naming the version served (docs/protocol.md §3.3).
   * Asking an extension method for a version we do not serve is -32007; on a standard A2A method an
   * extension we do not serve is simply not activated, as A2A treats extensions, so -32007 keeps its
   * A2A meaning there.
   */
  private negotiateExtensions(call: InboundCall, strict: boolean): string[] {
    const header = call.headers['a2a-extensions'] ?? call.headers['x-a2a-extensions'];
    const activated = new Set<string>();
    for (const uri of Extensions.parseServiceParameter(header)) {
      const answer = answerExtension(uri);
      if (answer.kind === 'served') activated.add(answer.uri);
      else if (answer.kind === 'refused' && strict) {
        throw new A2aVersionMismatchError(
          `Extension ${uri} is not served; this server serves ${EXTENSION_URI} (versions ${SUPPORTED_EXTENSION_VERSIONS.join(', ')})`,
          SUPPORTED_EXTENSION_VERSIONS,
          { requested: uri },
        );
      }
    }
    return [...activated];
  }
}

/** The `reason` of a JSON-RPC error's ErrorInfo detail (a bounded code such as `TASK_NOT_FOUND`), if it has one. */
function reasonOf(data: unknown): string | undefined {
  if (!Array.isArray(data)) return undefined;
  for (const detail of data) {
    const reason = (detail as { reason?: unknown } | null)?.reason;
    if (typeof reason === 'string' && reason.length <= 100) return reason;
  }
  return undefined;
}

/** The A2A version a standard call speaks: its `A2A-Version` (header or query parameter), else by its name. */
function a2aVersionOf(method: string, call: InboundCall): string {
  const asked = call.headers['a2a-version'] ?? call.versionParam;
  if (asked !== undefined && asked.length <= 10) return asked;
  return V03_METHODS.has(method) && !V1_METHODS.has(method) ? '0.3' : '1.0';
}

/** The namespace a call names (extension: `namespace`; A2A: `tenant`), else the caller's default; bounded. */
function namespaceOf(params: unknown, extension: boolean, call: InboundCall, fallback: string): string {
  const named =
    typeof params === 'object' && params !== null
      ? (params as Record<string, unknown>)[extension ? 'namespace' : 'tenant']
      : undefined;
  const namespace = typeof named === 'string' && named !== '' ? named : call.principal.defaultNamespace || fallback;
  return namespace.slice(0, 200);
}

/**
 * The stream's events, passed through unchanged (next, return and throw go straight to the stream's own
 * iterator, so closing it works as before), calling `end` once with the last event when the stream ends,
 * however it ends.
 */
function endingWith(
  events: AsyncIterable<JsonRpcResponse>,
  span: Span,
  end: (last: JsonRpcResponse | undefined) => void,
): AsyncIterable<JsonRpcResponse> {
  return {
    [Symbol.asyncIterator]() {
      const inner = events[Symbol.asyncIterator]();
      let last: JsonRpcResponse | undefined;
      let ended = false;
      const finish = (): void => {
        if (ended) return;
        ended = true;
        end(last);
      };
      return {
        async next() {
          try {
            const step = await inner.next();
            if (step.done) finish();
            else last = step.value;
            return step;
          } catch (err) {
            span.setStatus({ code: SpanStatusCode.ERROR });
            finish();
            throw err;
          }
        },
        async return(value?: unknown) {
          finish();
          return inner.return ? inner.return(value) : { done: true, value: undefined };
        },
        async throw(err?: unknown) {
          finish();
          if (inner.throw) return inner.throw(err);
          throw err;
        },
      };
    },
  };
}
