import { Injectable, Logger } from '@nestjs/common';
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

  private async answer(call: InboundCall): Promise<DispatchOutcome> {
    const started = process.hrtime.bigint();
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

    const parsed = parseGuardedJson(call.body, this.config.maxJsonDepth);
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

    const responseHeaders: Record<string, string> = {};
    const isExtensionMethod = rpc.method.startsWith(EXTENSION_PREFIX);
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
