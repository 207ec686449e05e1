import { Inject, Injectable, Logger } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate, type ValidationError as ClassValidationError } from 'class-validator';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { Extensions } from '@a2a-js/sdk';
import {
  ContentTypeNotSupportedError,
  ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequiredError,
  InvalidAgentResponseError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  toJsonRpcError,
  UnsupportedOperationError,
  VersionNotSupportedError,
} from '@a2a-js/sdk/errors';
import { AppConfig } from '../config/app.config.js';
import type { Reason } from '../contract/reasons.js';
import {
  A2aOperationNotFoundError,
  A2aVersionMismatchError,
  AuthorizationError,
  ResourceNotFoundError,
  DATABASE_UNAVAILABLE_MESSAGE,
  DatabaseUnavailableError,
  DomainError,
  ValidationError,
  type FieldViolation,
} from '../common/domain.errors.js';
import { RequestContext } from '../common/logging/request-context.js';
import { roleSatisfies, type Principal, type Role } from '../auth/principal.js';
import { isNamespaceSlug, MAX_NAMESPACE_SLUG_LENGTH, parentOf } from '../common/namespace-slug.js';
import { MembershipDirectory } from '../auth/identity.ports.js';
import { echoPrefix, INPUT_LIMITS } from '../common/input-limits.js';
import { parseGuardedJson, type JsonGuardFailure } from './json-guard.js';
import {
  badRequest,
  domainErrorToRpc,
  httpStatusFor,
  errorInfo,
  ERROR_INFO_TYPE,
  internalError,
  protocolError,
  RPC_CODES,
  type JsonRpcErrorObject,
} from './rpc-error.mapper.js';
import { RpcMethodRegistry } from './rpc-method.registry.js';
import type { RpcCallContext } from './rpc-context.js';
import {
  EXTENSION_URI,
  EXTENSION_URI_PREFIX,
  SUPPORTED_EXTENSION_VERSIONS,
  METHOD_ALIASES,
  V03_METHODS,
  V1_METHODS,
  resolveMethodVersion,
  type A2aVersion,
} from './protocol-version.js';
import { isFailure, type JsonRpcId, type JsonRpcResponse } from './jsonrpc.types.js';
import { A2A_REQUEST_HANDLER } from './a2a.tokens.js';
import { InFlightCalls } from './graceful-shutdown.js';
import { resolveStoreScope, type StoreScope } from '../database/store-scope.js';
import { isTransientDatabaseError } from '../database/database-retry.js';
import { standardParamsViolations } from './standard-params.validator.js';
import {
  hiddenTask,
  STANDARD_METHOD_ROLES,
  STREAMING_METHODS,
  TASK_CREATING_METHODS,
  taskIdOf,
  tenantOf,
} from './standard-access.js';
import { OpenStreams, type StreamSlot } from './open-streams.js';

/** One inbound JSON-RPC message, as any transport hands it over. */
export interface InboundCall {
  /** The raw body text (HTTP body or one stdio line). */
  body: string;
  transport: 'http' | 'stdio';
  principal: Principal;
  requestId: string;
  /** Lower-cased header names; empty for stdio. */
  headers: Readonly<Record<string, string | undefined>>;
  /** `?A2A-Version=` on HTTP. */
  versionParam?: string;
}

export type DispatchOutcome =
  | {
      kind: 'single';
      response: JsonRpcResponse;
      headers: Record<string, string>;
      /** HTTP status when it is not the JSON-RPC binding's 200 (401, 403, 429; 500 for -32603). */
      httpStatus?: number;
    }
  | {
      kind: 'stream';
      id: JsonRpcId;
      events: AsyncIterable<JsonRpcResponse>;
      headers: Record<string, string>;
      /** The caller's stream slot: the transport releases it when the stream ends, however it ends. */
      slot: StreamSlot;
    };

/**
 * Admits a message (wire JSON) before the SDK sees it: for one that starts a task, returns the contextId
 * to use (a new session's, or the one named); for an answer to a task, undefined. Throws a domain error
 * to refuse it (a closed session, a used-up budget, a reply that does not answer what the task waits for).
 */
export type MessageAdmission = (
  scope: StoreScope,
  message: Record<string, unknown>,
  context: ServerCallContext,
) => Promise<string | undefined>;

export interface CallObserver {
  (method: string, code: number | 'ok', transport: 'http' | 'stdio', seconds: number): void;
}

const EXTENSION_PREFIX = '_cleveragents/';
/** Every streaming method takes a slot beforehand; this stands in should the SDK stream another. */
const UNCOUNTED: StreamSlot = { release: () => undefined };
const JSON_MEDIA_TYPES = new Set(['application/json', 'application/a2a+json', 'application/json-rpc']);

/**
 * The transport-agnostic JSON-RPC dispatcher: parsing and limits, envelope checks, version
 * negotiation, `_cleveragents/*` routing with params validation and role checks, and the SDK's own
 * transport handlers for every standard A2A method. HTTP and stdio both call `dispatch`.
 */
@Injectable()
export class JsonRpcDispatcher {
  private readonly logger = new Logger(JsonRpcDispatcher.name);
  private readonly v1: JsonRpcTransportHandler;
  private readonly legacy: LegacyJsonRpcTransportHandler;
  private observer: CallObserver | undefined;
  private admission: MessageAdmission | undefined;

  constructor(
    @Inject(A2A_REQUEST_HANDLER) requestHandler: A2ARequestHandler,
    private readonly registry: RpcMethodRegistry,
    private readonly config: AppConfig,
    private readonly inFlight: InFlightCalls,
    private readonly namespaces: MembershipDirectory,
    private readonly openStreams: OpenStreams,
  ) {
    this.v1 = new JsonRpcTransportHandler(requestHandler);
    this.legacy = new LegacyJsonRpcTransportHandler(requestHandler);
  }

  /** Metrics hook; the dispatcher itself knows no metrics library. */
  setObserver(observer: CallObserver): void {
    this.observer = observer;
  }

  setAdmission(admission: MessageAdmission): void {
    this.admission = admission;
  }

  /** HTTP's Content-Type check (stdio has none): anything but JSON is -32005, as the SDK answers. */
  static contentTypeError(contentType: string | undefined): JsonRpcResponse | undefined {
    if (!contentType) return undefined;
    const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
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
        this.observer?.(method, code, call.transport, seconds);
        const line = { msg: 'rpc call', code, ms: Math.round(seconds * 1000) };
        if (code === 'ok') this.logger.log(line);
        else this.logger.warn(line);
      } else {
        this.observer?.(method, 'ok', call.transport, Number(process.hrtime.bigint() - started) / 1e9);
        this.logger.log({ msg: 'rpc stream opened' });
      }
      return outcome;
    };

    const parsed = parseGuardedJson(call.body, this.config.maxJsonDepth);
    if (!parsed.ok) return finish(this.single(null, guardFailureError(parsed.failure)));
    const request = parsed.value;
    if (Array.isArray(request)) {
      return finish(
        this.single(
          null,
          protocolError(RPC_CODES.INVALID_REQUEST, 'Batch requests are not supported', 'BATCH_NOT_SUPPORTED'),
        ),
      );
    }
    const envelopeProblem = checkEnvelope(request);
    const id = pickId(request);
    if (envelopeProblem) {
      return finish(this.single(id, protocolError(RPC_CODES.INVALID_REQUEST, envelopeProblem, 'INVALID_REQUEST')));
    }
    const rpc = request as { method: string; params?: unknown; id?: JsonRpcId };
    method = this.metricLabel(rpc.method);
    RequestContext.assign({ rpcId: id, method: rpc.method.slice(0, 200) });

    const responseHeaders: Record<string, string> = {};
    const isExtensionMethod = rpc.method.startsWith(EXTENSION_PREFIX);
    try {
      if (this.negotiateExtensions(call, isExtensionMethod)) responseHeaders['a2a-extensions'] = EXTENSION_URI;
    } catch (err) {
      return finish(this.single(id, this.mapError(err)));
    }

    if (isExtensionMethod) {
      const outcome = await this.invokeExtension(rpc.method, rpc.params, id, call);
      return finish({ ...outcome, headers: { ...outcome.headers, ...responseHeaders } });
    }
    return finish(await this.invokeStandard(rpc, id, call, responseHeaders));
  }

  /** Metrics and logs label calls by method; only names we serve are used, so the label set is bounded. */
  private metricLabel(name: string): string {
    if (V1_METHODS.has(name) || V03_METHODS.has(name) || METHOD_ALIASES.has(name) || this.registry.get(name))
      return name;
    return '(unknown)';
  }

  private single(id: JsonRpcId, error: JsonRpcErrorObject): DispatchOutcome {
    return { kind: 'single', response: { jsonrpc: '2.0', id, error }, headers: {} };
  }

  /**
   * Returns true when the client activated our extension. Asking an extension method for a version we
   * do not serve is -32007; on a standard A2A method an extension we do not serve is simply not
   * activated, as A2A treats extensions, so -32007 keeps its A2A meaning there.
   */
  private negotiateExtensions(call: InboundCall, strict: boolean): boolean {
    const header = call.headers['a2a-extensions'] ?? call.headers['x-a2a-extensions'];
    let activated = false;
    for (const uri of Extensions.parseServiceParameter(header)) {
      if (!uri.startsWith(EXTENSION_URI_PREFIX)) continue;
      const m = /^v(\d+)(?:\.(\d+))?$/.exec(uri.slice(EXTENSION_URI_PREFIX.length));
      const version = m ? `${m[1]}.${m[2] ?? '0'}` : undefined;
      const servedMajor = m?.[1] === '1' && (m[2] === undefined || SUPPORTED_EXTENSION_VERSIONS.includes(version!));
      if (!servedMajor) {
        if (!strict) continue;
        throw new A2aVersionMismatchError(
          `Extension ${uri} is not served; this server serves ${EXTENSION_URI} (versions ${SUPPORTED_EXTENSION_VERSIONS.join(', ')})`,
          SUPPORTED_EXTENSION_VERSIONS,
          { requested: uri },
        );
      }
      activated = true;
    }
    return activated;
  }

  private async invokeExtension(
    name: string,
    rawParams: unknown,
    id: JsonRpcId,
    call: InboundCall,
  ): Promise<DispatchOutcome> {
    try {
      const method = this.registry.get(name);
      if (!method) throw new A2aOperationNotFoundError(echoPrefix(name));
      if (
        rawParams !== undefined &&
        (typeof rawParams !== 'object' || rawParams === null || Array.isArray(rawParams))
      ) {
        throw new ValidationError([{ field: 'params', description: 'params must be a JSON object' }]);
      }
      const params = camelCaseKeys((rawParams ?? {}) as Record<string, unknown>);
      // Checked before the role check, which names the namespace in its answer.
      if (params.namespace !== undefined && !isNamespaceSlug(params.namespace)) {
        throw new ValidationError([
          {
            field: 'namespace',
            description: `must be a namespace slug of at most ${MAX_NAMESPACE_SLUG_LENGTH} characters`,
          },
        ]);
      }
      if (method.role !== 'authenticated') {
        const given = typeof params.namespace === 'string' ? params.namespace : undefined;
        const namespace =
          method.scope === 'parent'
            ? ((given && parentOf(given)) ?? this.config.defaultNamespace)
            : (given ?? call.principal.defaultNamespace);
        this.authorize(call.principal, name, namespace, method.role);
      }
      const instance = await validateParams(method.params, params);
      const context: RpcCallContext = {
        principal: call.principal,
        transport: call.transport,
        requestId: call.requestId,
      };
      const result = await method.invoke(instance, context);
      return { kind: 'single', response: { jsonrpc: '2.0', id, result: result ?? {} }, headers: {} };
    } catch (err) {
      return this.failure(id, err);
    }
  }

  /**
   * SPEC.md §6.1: a caller with no role in a namespace learns nothing of it (-32001, as for a
   * namespace that does not exist); a role too low is -32003.
   */
  private authorize(principal: Principal, operation: string, namespace: string, required: Role): void {
    const held = principal.roleIn(namespace);
    if (!held) {
      throw new ResourceNotFoundError(`Namespace not found: ${namespace}`, 'NAMESPACE_NOT_FOUND', { namespace });
    }
    if (!roleSatisfies(held, required)) {
      throw new AuthorizationError(
        `${operation} requires the ${required} role in namespace ${namespace}; the caller holds ${held}`,
        'ROLE_REQUIRED',
        { requiredRole: required, heldRole: held, namespace },
      );
    }
  }

  /**
   * Standard operations act in the request's tenant (or the caller's default namespace). With no role
   * there, a call about a task gets the very answer a missing task gets; any other call gets -32001
   * NAMESPACE_NOT_FOUND. A call that would create a task needs the namespace to exist.
   */
  private async authorizeStandard(
    method: string,
    version: A2aVersion,
    params: unknown,
    principal: Principal,
  ): Promise<void> {
    const required = STANDARD_METHOD_ROLES.get(method);
    if (required === undefined || required === 'authenticated') return;
    const namespace = tenantOf(version, params) ?? principal.defaultNamespace;
    const taskId = taskIdOf(method, params);
    if (!principal.roleIn(namespace) && taskId !== undefined) throw hiddenTask(taskId);
    this.authorize(principal, method, namespace, required);
    if (TASK_CREATING_METHODS.has(method) && taskId === undefined) {
      const existing = await this.namespaces.existing([namespace]);
      if (!existing.has(namespace)) {
        throw new ResourceNotFoundError(`Namespace not found: ${namespace}`, 'NAMESPACE_NOT_FOUND', { namespace });
      }
    }
  }

  /**
   * Every message is admitted before the SDK sees it. One that starts a task (it names none) goes to its
   * session: a new one (whose id the message then carries) or the one its contextId names; a closed
   * session refuses it (SPEC.md §6.4). One that answers a waiting task is checked against what the task
   * waits for (SPEC.md §5). v1.0 and v0.3 both carry `message.contextId` / `message.taskId` / `parts`.
   */
  private async admit(method: string, version: A2aVersion, params: unknown, principal: Principal): Promise<unknown> {
    if (!this.admission || !TASK_CREATING_METHODS.has(method)) return params;
    const message = (params as { message?: Record<string, unknown> } | undefined)?.message;
    if (typeof message !== 'object' || message === null) return params;
    const scoped = new ServerCallContext({ user: principal, tenant: tenantOf(version, params) });
    const scope = resolveStoreScope(scoped, this.config.defaultNamespace);
    const contextId = await this.admission(scope, message, scoped);
    return contextId === undefined || contextId === message.contextId
      ? params
      : { ...(params as object), message: { ...message, contextId } };
  }

  private failure(id: JsonRpcId, err: unknown): DispatchOutcome {
    const status =
      err instanceof DomainError
        ? httpStatusFor(err)
        : isTransientDatabaseError(err)
          ? httpStatusFor(new DatabaseUnavailableError())
          : undefined;
    return {
      kind: 'single',
      response: { jsonrpc: '2.0', id, error: this.mapError(err) },
      headers: {},
      ...(status !== undefined && status !== 200 ? { httpStatus: status } : {}),
    };
  }

  private async invokeStandard(
    rpc: { method: string; params?: unknown },
    id: JsonRpcId,
    call: InboundCall,
    headers: Record<string, string>,
  ): Promise<DispatchOutcome> {
    let resolved;
    try {
      resolved = resolveMethodVersion(rpc.method, call.headers['a2a-version'] ?? call.versionParam);
    } catch (err) {
      return { kind: 'single', response: { jsonrpc: '2.0', id, error: this.mapError(err) }, headers };
    }
    if (!V1_METHODS.has(resolved.method) && !V03_METHODS.has(resolved.method)) {
      // The SDK would repeat the whole name, twice: a client may send megabytes of it.
      return { ...this.failure(id, new A2aOperationNotFoundError(echoPrefix(rpc.method))), headers };
    }
    const context = new ServerCallContext({
      user: call.principal,
      requestedVersion: resolved.version,
      requestedExtensions: Extensions.parseServiceParameter(
        call.headers['a2a-extensions'] ?? call.headers['x-a2a-extensions'],
      ),
    });
    const violations = standardParamsViolations(resolved.method, resolved.version, rpc.params);
    if (violations.length > 0) {
      const error = toJsonRpcError(
        new RequestMalformedError(`Invalid params: ${violations.map((v) => `${v.field} ${v.description}`).join('; ')}`),
      ) as JsonRpcErrorObject;
      error.data = [...(error.data ?? []), badRequest(violations)];
      return { kind: 'single', response: { jsonrpc: '2.0', id, error }, headers };
    }
    let params = rpc.params;
    let slot: StreamSlot | undefined;
    try {
      await this.authorizeStandard(resolved.method, resolved.version, rpc.params, call.principal);
      // Taken before admission, so that a refused stream starts no session and no task.
      if (STREAMING_METHODS.has(resolved.method)) slot = this.openStreams.reserve(call.principal);
      params = await this.admit(resolved.method, resolved.version, params, call.principal);
    } catch (err) {
      slot?.release();
      const outcome = this.failure(id, err);
      return { ...outcome, headers: { ...outcome.headers, ...headers } };
    }
    const handler = resolved.version === '1.0' ? this.v1 : this.legacy;
    const body = { ...(rpc as object), params, method: resolved.method, id };
    let result: unknown;
    try {
      result = await handler.handle(body as never, context);
    } catch (err) {
      slot?.release();
      return { kind: 'single', response: { jsonrpc: '2.0', id, error: this.mapError(err) }, headers };
    }
    if (result && typeof (result as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') {
      const iterator = (result as AsyncIterable<JsonRpcResponse>)[Symbol.asyncIterator]();
      const held = slot ?? UNCOUNTED;
      let first: IteratorResult<JsonRpcResponse>;
      try {
        first = await iterator.next();
      } catch (err) {
        held.release();
        // An error before the first event is an ordinary JSON-RPC error, not a stream.
        return { kind: 'single', response: { jsonrpc: '2.0', id, error: this.mapError(err) }, headers };
      }
      // A message's stream is also what stores its task's events: when its client goes away, the rest
      // is still read (and stored); the run goes on until it rests or CancelTask stops it.
      const drainOnClose = TASK_CREATING_METHODS.has(resolved.method);
      const events = this.streamFrom(first, iterator, id, drainOnClose, held);
      return { kind: 'stream', id, events, headers, slot: held };
    }
    slot?.release();
    return { kind: 'single', response: this.sanitise(result as JsonRpcResponse), headers };
  }

  private async *streamFrom(
    first: IteratorResult<JsonRpcResponse>,
    iterator: AsyncIterator<JsonRpcResponse>,
    id: JsonRpcId,
    drainOnClose: boolean,
    slot: StreamSlot,
  ): AsyncGenerator<JsonRpcResponse> {
    let done = first.done === true;
    try {
      if (done) return;
      yield this.sanitise(first.value);
      for (;;) {
        const next = await iterator.next();
        if (next.done) {
          done = true;
          return;
        }
        yield this.sanitise(next.value);
      }
    } catch (err) {
      done = true;
      yield { jsonrpc: '2.0', id, error: this.mapError(err) };
    } finally {
      slot.release();
      if (!done && drainOnClose) this.drain(iterator);
      else await iterator.return?.();
    }
  }

  /** Reads a stream nobody listens to any more to its end, so that its handler finishes its work. */
  private drain(iterator: AsyncIterator<JsonRpcResponse>): void {
    void this.inFlight.track(
      (async () => {
        try {
          for (;;) if ((await iterator.next()).done) return;
        } catch (err) {
          this.logger.warn({ msg: 'stream ended with an error after its client left', error: String(err) });
        }
      })(),
    );
  }

  /**
   * The SDK maps unexpected errors to -32603 carrying their message: we never expose it. And some of
   * its errors (an unknown method) carry no ErrorInfo: every error of ours does (SPEC.md §7).
   */
  private sanitise(response: JsonRpcResponse): JsonRpcResponse {
    if (!isFailure(response)) return response;
    // The SDK's handler keeps only an error's message: a database away is known again by its own.
    if (response.error.code === RPC_CODES.INTERNAL_ERROR && response.error.message === DATABASE_UNAVAILABLE_MESSAGE) {
      return { ...response, error: domainErrorToRpc(new DatabaseUnavailableError()) };
    }
    if (response.error.code === RPC_CODES.INTERNAL_ERROR && !hasCorrelation(response.error.data)) {
      const error = internalError();
      this.logger.error({
        msg: 'internal error in A2A handler',
        detail: response.error.message,
        correlationId: correlationOf(error),
      });
      return { ...response, error };
    }
    const data = response.error.data;
    const hasInfo = Array.isArray(data) && data.some((d) => isObject(d) && d['@type'] === ERROR_INFO_TYPE);
    if (hasInfo) return response;
    const extra = data === undefined ? [] : Array.isArray(data) ? data : [data];
    const info =
      A2A_ERROR_INFO_BY_CODE.get(response.error.code) ?? errorInfo(REASON_BY_CODE[response.error.code] ?? 'ERROR');
    return { ...response, error: { ...response.error, data: [info, ...extra] } };
  }

  mapError(err: unknown): JsonRpcErrorObject {
    if (err instanceof DomainError) return domainErrorToRpc(err);
    if (isTransientDatabaseError(err)) return domainErrorToRpc(new DatabaseUnavailableError(err));
    const sdk = toJsonRpcError(err);
    if (sdk.code !== RPC_CODES.INTERNAL_ERROR) return sdk as JsonRpcErrorObject;
    const error = internalError();
    this.logger.error(
      { msg: 'unhandled error', correlationId: correlationOf(error) },
      err instanceof Error ? err : undefined,
    );
    return error;
  }
}

/** What a body refused by the JSON guard is answered with. */
function guardFailureError(f: JsonGuardFailure): JsonRpcErrorObject {
  switch (f.kind) {
    case 'syntax':
      return protocolError(RPC_CODES.PARSE_ERROR, `Parse error: ${f.message}`, 'PARSE_ERROR');
    case 'too-deep':
      return protocolError(
        RPC_CODES.INVALID_REQUEST,
        `JSON nesting deeper than ${f.maxDepth} levels`,
        'JSON_TOO_DEEP',
        {
          maxDepth: String(f.maxDepth),
        },
      );
    case 'forbidden-key':
      return protocolError(RPC_CODES.INVALID_REQUEST, `Forbidden JSON key "${f.key}"`, 'FORBIDDEN_KEY', { key: f.key });
    case 'nul-character':
      return protocolError(
        RPC_CODES.INVALID_PARAMS,
        `Strings may not contain the NUL character (U+0000)${f.key ? `: "${echoPrefix(f.key)}"` : ''}`,
        'NUL_CHARACTER',
        { key: echoPrefix(f.key) },
      );
    case 'lone-surrogate':
      return {
        code: RPC_CODES.INVALID_PARAMS,
        message: `Invalid params: ${echoPrefix(f.path, INPUT_LIMITS.identifier)}: a string holds a lone UTF-16 surrogate`,
        data: [
          errorInfo('LONE_SURROGATE', { fields: echoPrefix(f.path, INPUT_LIMITS.identifier) }),
          badRequest([
            {
              field: echoPrefix(f.path, INPUT_LIMITS.identifier),
              description: 'holds a lone UTF-16 surrogate (not valid Unicode text)',
            },
          ]),
        ],
      };
    default: {
      const unreachable: never = f;
      throw new Error(`unhandled guard failure ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * The ErrorInfo the SDK attaches to each A2A error in v1.0 answers, by code: its v0.3 layer sends the
 * same errors without one, and gets this one added, so that a v0.3 and a v1.0 TaskNotFound say the
 * same (SPEC.md §4: domain a2a-protocol.org).
 */
const A2A_ERROR_INFO_BY_CODE: ReadonlyMap<number, unknown> = new Map(
  [
    TaskNotFoundError,
    TaskNotCancelableError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
    ContentTypeNotSupportedError,
    InvalidAgentResponseError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    VersionNotSupportedError,
  ].map((ErrorClass) => {
    const { code, data } = toJsonRpcError(new ErrorClass()) as JsonRpcErrorObject;
    return [code, data![0]];
  }),
);

/** Reasons for the generic JSON-RPC codes the SDK sends without an ErrorInfo. */
const REASON_BY_CODE: Record<number, Reason> = {
  [RPC_CODES.PARSE_ERROR]: 'PARSE_ERROR',
  [RPC_CODES.INVALID_REQUEST]: 'INVALID_REQUEST',
  [RPC_CODES.METHOD_NOT_FOUND]: 'METHOD_NOT_FOUND',
  [RPC_CODES.INVALID_PARAMS]: 'INVALID_PARAMS',
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function correlationOf(error: JsonRpcErrorObject): string {
  const info = error.data?.[0] as { metadata?: { correlationId?: string } } | undefined;
  return info?.metadata?.correlationId ?? '';
}

function hasCorrelation(data: unknown): boolean {
  return (
    Array.isArray(data) &&
    data.some(
      (d) =>
        typeof d === 'object' &&
        d !== null &&
        'metadata' in d &&
        'correlationId' in ((d as { metadata: object }).metadata ?? {}),
    )
  );
}

function pickId(request: unknown): JsonRpcId {
  if (typeof request !== 'object' || request === null) return null;
  const id = (request as { id?: unknown }).id;
  if (typeof id === 'string') return id.length <= INPUT_LIMITS.jsonRpcId ? id : null;
  return typeof id === 'number' && Number.isInteger(id) ? id : null;
}

/** JSON-RPC 2.0 envelope checks; returns the problem or undefined. */
function checkEnvelope(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null) return 'The request must be a JSON object';
  const r = request as Record<string, unknown>;
  if (r.jsonrpc !== '2.0') return 'The "jsonrpc" member must be exactly "2.0"';
  if ('id' in r) {
    const id = r.id;
    if (!(typeof id === 'string' || id === null || (typeof id === 'number' && Number.isInteger(id)))) {
      return 'The "id" member must be a string, an integer or null';
    }
    if (typeof id === 'string' && id.length > INPUT_LIMITS.jsonRpcId) {
      return `The "id" member may be at most ${INPUT_LIMITS.jsonRpcId} characters long`;
    }
  }
  if (typeof r.method !== 'string' || r.method.length === 0) return 'The "method" member must be a non-empty string';
  return undefined;
}

/** ADR-047 writes `plan_id`; A2A JSON is camelCase. Top-level snake_case keys are accepted as aliases. */
function camelCaseKeys(params: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    const camel = key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
    if (camel !== key && Object.prototype.hasOwnProperty.call(params, camel)) {
      out[key] = value; // both spellings given: keep the snake one visible so validation names it
    } else {
      out[camel] = value;
    }
  }
  return out;
}

async function validateParams(cls: (new () => object) | undefined, params: Record<string, unknown>): Promise<object> {
  if (!cls) {
    const unexpected = Object.keys(params).filter((k) => k !== 'namespace');
    if (unexpected.length > 0) {
      throw new ValidationError(
        unexpected.map((field) => ({ field, description: 'unknown field: this method takes no params' })),
      );
    }
    return params;
  }
  const instance = plainToInstance(cls, params, { enableImplicitConversion: false });
  const errors = await validate(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
  if (errors.length > 0) throw new ValidationError(flattenViolations(errors));
  return instance;
}

function flattenViolations(errors: ClassValidationError[], prefix = ''): FieldViolation[] {
  const out: FieldViolation[] = [];
  for (const e of errors) {
    // An array element is named as in JSON paths: `changes[3].spec.x`.
    const field = !prefix
      ? e.property
      : /^\d+$/.test(e.property)
        ? `${prefix}[${e.property}]`
        : `${prefix}.${e.property}`;
    for (const description of Object.values(e.constraints ?? {})) out.push({ field, description });
    if (e.children && e.children.length > 0) out.push(...flattenViolations(e.children, field));
  }
  return out;
}
