import { Inject, Injectable, Logger } from '@nestjs/common';
import { JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { Extensions, ListTasksRequest } from '@a2a-js/sdk';
import { RequestMalformedError, toJsonRpcError } from '@a2a-js/sdk/errors';
import type { Principal } from '../common/principal.js';
import {
  A2aOperationNotFoundError,
  DATABASE_UNAVAILABLE_MESSAGE,
  DatabaseUnavailableError,
  ValidationError,
  STORAGE_UNAVAILABLE_MESSAGE,
  StorageUnavailableError,
} from '../common/domain.errors.js';
import { LAST_SEQUENCE_PARAM } from '@cleveragents/contract';
import { StreamCursors } from './stream-cursors.js';
import { echoPrefix } from '../common/input-limits.js';
import { MembershipDirectory } from '../auth/identity.ports.js';
import {
  badRequest,
  correlationOf,
  domainErrorToRpc,
  hasCorrelation,
  internalError,
  rpcErrorOf,
  rpcHttpStatusOf,
  RPC_CODES,
  withErrorInfo,
  type JsonRpcErrorObject,
} from '../rpc/rpc-error.mapper.js';
import { requireRole } from '../rpc/rpc-role.guard.js';
import { namespaceNotFound } from '../rpc/rpc.errors.js';
import {
  V03_METHODS,
  V1_METHODS,
  resolveMethodVersion,
  versionMismatchHint,
  type A2aVersion,
  type ResolvedMethod,
} from './protocol-version.js';
import {
  errorOutcome,
  isFailure,
  JsonText,
  type DispatchOutcome,
  type InboundCall,
  type JsonRpcId,
  type JsonRpcResponse,
} from './jsonrpc.types.js';
import { standardParamsViolations } from './standard-params.validator.js';
import { completeV03Message } from './v03-message-defaults.js';
import {
  hiddenTask,
  STANDARD_METHOD_ROLES,
  STREAMING_METHODS,
  TASK_CREATING_METHODS,
  taskIdOf,
  tenantOf,
} from './standard-access.js';
import { OpenStreams, type StreamSlot } from './open-streams.js';
import { A2A_REQUEST_HANDLER } from './a2a.tokens.js';
import type { SpecRequestHandler } from './spec-request-handler.js';
import { CallFailures } from './call-failures.js';
import { AppConfig } from '../config/app.config.js';
import { noActorBackend } from '../execution/execution.errors.js';

type ListParams = Record<string, unknown>;

/**
 * A v1.0 ListTasks whose page may be written from the tasks' stored JSON: its params are an object the
 * SDK would take (no empty key). Any other call, and one with bad params, goes through the SDK.
 */
function listsAsText(resolved: ResolvedMethod, params: unknown): params is ListParams {
  if (resolved.method !== 'ListTasks' || resolved.version !== '1.0') return false;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  return !Object.hasOwn(params, '');
}

/** Every streaming method takes a slot beforehand; this stands in should the SDK stream another. */
const UNCOUNTED: StreamSlot = { release: () => undefined };

/**
 * Calls a standard A2A method: version resolution, params checks, the method's role in the call's
 * namespace (and, on a server without actors, the refusal of every message) and a stream slot, then the SDK's own JSON-RPC transport handler (v1.0 or v0.3) over the
 * request handler, which admits messages. Its answers are given ErrorInfo details and never leak an
 * internal message; an error the request handler kept in CallFailures is answered as that error.
 */
@Injectable()
export class StandardInvoker {
  private readonly logger = new Logger(StandardInvoker.name);
  private readonly v1: JsonRpcTransportHandler;
  private readonly legacy: LegacyJsonRpcTransportHandler;

  constructor(
    @Inject(A2A_REQUEST_HANDLER) private readonly requestHandler: SpecRequestHandler,
    private readonly namespaces: MembershipDirectory,
    private readonly openStreams: OpenStreams,
    private readonly failures: CallFailures,
    private readonly config: AppConfig,
    private readonly cursors: StreamCursors,
  ) {
    this.v1 = new JsonRpcTransportHandler(requestHandler);
    this.legacy = new LegacyJsonRpcTransportHandler(requestHandler);
  }

  async invoke(
    rpc: { method: string; params?: unknown },
    id: JsonRpcId,
    call: InboundCall,
    headers: Record<string, string>,
  ): Promise<DispatchOutcome> {
    let resolved;
    try {
      resolved = resolveMethodVersion(rpc.method, call.headers['a2a-version'] ?? call.versionParam);
    } catch (err) {
      return errorOutcome(id, this.mapError(err), headers);
    }
    const outcome = await this.invokeResolved(rpc, resolved, id, call, headers);
    // v0.3 clients of a streaming method read its answer as a stream, errors included.
    const asStream = resolved.version === '0.3' && STREAMING_METHODS.has(resolved.method);
    return asStream && outcome.kind === 'single' ? { ...outcome, asStream } : outcome;
  }

  private async invokeResolved(
    rpc: { method: string; params?: unknown },
    resolved: ResolvedMethod,
    id: JsonRpcId,
    call: InboundCall,
    headers: Record<string, string>,
  ): Promise<DispatchOutcome> {
    if (!V1_METHODS.has(resolved.method) && !V03_METHODS.has(resolved.method)) {
      // The SDK would repeat the whole name, twice: a client may send megabytes of it.
      return this.failure(id, new A2aOperationNotFoundError(echoPrefix(rpc.method)), headers);
    }
    const mismatch = versionMismatchHint(resolved.method, resolved.version);
    if (mismatch !== undefined) {
      return this.failure(id, new A2aOperationNotFoundError(resolved.method, mismatch), headers);
    }
    const context = new ServerCallContext({
      user: call.principal,
      requestedVersion: resolved.version,
      requestedExtensions: Extensions.parseServiceParameter(
        call.headers['a2a-extensions'] ?? call.headers['x-a2a-extensions'],
      ),
    });
    completeV03Message(resolved.method, resolved.version, rpc.params);
    const violations = standardParamsViolations(resolved.method, resolved.version, rpc.params);
    if (violations.length > 0) {
      const error = toJsonRpcError(
        new RequestMalformedError(`Invalid params: ${violations.map((v) => `${v.field} ${v.description}`).join('; ')}`),
      ) as JsonRpcErrorObject;
      error.data = [...(error.data ?? []), badRequest(violations)];
      return errorOutcome(id, error, headers);
    }
    const cursor = cursorOf(resolved.method, rpc.params, call.headers['last-event-id']);
    if (cursor instanceof ValidationError) return this.failure(id, cursor, headers);
    if (cursor !== undefined) this.cursors.keep(context, cursor);
    let slot: StreamSlot | undefined;
    try {
      await this.authorize(resolved.method, resolved.version, rpc.params, call.principal);
      // Before the SDK's own checks (v0.3 streaming asks the card first): nothing here could ever run it.
      if (this.config.actorBackend === 'none' && TASK_CREATING_METHODS.has(resolved.method)) {
        throw noActorBackend('A message');
      }
      // Taken before the handler admits the message, so that a refused stream starts no session and no task.
      if (STREAMING_METHODS.has(resolved.method)) slot = this.openStreams.reserve(call.principal);
    } catch (err) {
      slot?.release();
      return this.failure(id, err, headers);
    }
    const handler = resolved.version === '1.0' ? this.v1 : this.legacy;
    const body = { ...(rpc as object), method: resolved.method, id };
    let result: unknown;
    try {
      if (listsAsText(resolved, rpc.params)) result = await this.listTasksText(rpc.params, id, context);
      result ??= await handler.handle(body, context);
    } catch (err) {
      slot?.release();
      return errorOutcome(id, this.mapError(err), headers);
    }
    if (result && typeof (result as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') {
      const iterator = (result as AsyncIterable<JsonRpcResponse>)[Symbol.asyncIterator]();
      const held = slot ?? UNCOUNTED;
      let first: IteratorResult<JsonRpcResponse>;
      try {
        first = await iterator.next();
      } catch (err) {
        held.release();
        this.failures.take(context);
        // An error before the first event is an ordinary JSON-RPC error, not a stream.
        return this.failure(id, err, headers);
      }
      // The task's events are stored by its recording whether or not anyone listens: a stream whose client
      // went away simply stops following it.
      const events = this.streamFrom(first, iterator, id, held);
      return { kind: 'stream', id, events, headers, slot: held };
    }
    slot?.release();
    const response = result as JsonRpcResponse;
    const kept = this.failures.take(context);
    if (kept !== undefined && isFailure(response)) return this.failure(id, kept, headers);
    return { kind: 'single', response: this.sanitise(response), headers };
  }

  /**
   * Standard operations act in the request's tenant (or the caller's default namespace). With no role
   * there, a call about a task gets the very answer a missing task gets; any other call gets -32001
   * NAMESPACE_NOT_FOUND. A call that would create a task needs the namespace to exist.
   */
  private async authorize(method: string, version: A2aVersion, params: unknown, principal: Principal): Promise<void> {
    const required = STANDARD_METHOD_ROLES.get(method);
    if (required === undefined || required === 'authenticated') return;
    const namespace = tenantOf(version, params) ?? principal.defaultNamespace;
    const taskId = taskIdOf(method, params);
    if (!principal.roleIn(namespace) && taskId !== undefined) throw hiddenTask(taskId);
    requireRole(principal, method, namespace, required);
    if (TASK_CREATING_METHODS.has(method) && taskId === undefined) {
      const existing = await this.namespaces.existing([namespace]);
      if (!existing.has(namespace)) {
        throw namespaceNotFound(namespace);
      }
    }
  }

  /**
   * A v1.0 ListTasks answered by the request handler's listTasksText, the steps of the SDK's transport
   * handler kept (the call's tenant, the params as ListTasksRequest, an error as its JSON-RPC error).
   * Undefined when the call asks for history trimming, which only the SDK's path does.
   */
  private async listTasksText(
    params: ListParams,
    id: JsonRpcId,
    context: ServerCallContext,
  ): Promise<JsonRpcResponse | undefined> {
    try {
      const request = ListTasksRequest.fromJSON(params);
      if (request.historyLength !== undefined) return undefined;
      // As the SDK: a tenant in the params is the call's (the access check above read the same one).
      if (params.tenant) context.setTenant(params.tenant as string);
      const text = await this.requestHandler.listTasksText(request, context);
      return { jsonrpc: '2.0', id, result: new JsonText(text) };
    } catch (err) {
      return { jsonrpc: '2.0', id, error: toJsonRpcError(err) };
    }
  }

  private failure(id: JsonRpcId, err: unknown, headers: Record<string, string>): DispatchOutcome {
    return errorOutcome(id, this.mapError(err), headers, rpcHttpStatusOf(err));
  }

  private mapError(err: unknown): JsonRpcErrorObject {
    return rpcErrorOf(err, this.logger);
  }

  private async *streamFrom(
    first: IteratorResult<JsonRpcResponse>,
    iterator: AsyncIterator<JsonRpcResponse>,
    id: JsonRpcId,
    slot: StreamSlot,
  ): AsyncGenerator<JsonRpcResponse> {
    let done = false;
    try {
      if (first.done) {
        done = true;
        return;
      }
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
      if (!done) await iterator.return?.();
    }
  }

  /**
   * The SDK maps unexpected errors to -32603 carrying their message: we never expose it. And some of
   * its errors (an unknown method) carry no ErrorInfo: every error of ours does (docs/protocol.md §7).
   */
  private sanitise(response: JsonRpcResponse): JsonRpcResponse {
    if (!isFailure(response)) return response;
    // The SDK's handler keeps only an error's message: a database away, or its storage failing, is known
    // again by its own.
    if (response.error.code === RPC_CODES.INTERNAL_ERROR && response.error.message === DATABASE_UNAVAILABLE_MESSAGE) {
      return { ...response, error: domainErrorToRpc(new DatabaseUnavailableError()) };
    }
    if (response.error.code === RPC_CODES.INTERNAL_ERROR && response.error.message === STORAGE_UNAVAILABLE_MESSAGE) {
      return { ...response, error: domainErrorToRpc(new StorageUnavailableError()) };
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
    return { ...response, error: withErrorInfo(response.error) };
  }
}

/** The methods that take a stream cursor. */
const RESUMABLE_METHODS: ReadonlySet<string> = new Set(['SubscribeToTask', 'tasks/resubscribe']);

/**
 * The sequence number a SubscribeToTask resumes after: its `lastSequence` param (checked with the params),
 * else HTTP's `Last-Event-ID` header, which must then be a non-negative integer. Undefined for none.
 */
function cursorOf(
  method: string,
  params: unknown,
  lastEventId: string | undefined,
): number | ValidationError | undefined {
  if (!RESUMABLE_METHODS.has(method)) return undefined;
  const named = (params as Record<string, unknown> | undefined)?.[LAST_SEQUENCE_PARAM];
  if (typeof named === 'number') return named;
  if (lastEventId === undefined) return undefined;
  const text = lastEventId.trim();
  if (!/^\d{1,15}$/.test(text)) {
    return new ValidationError([
      { field: 'Last-Event-ID', description: 'must be a non-negative integer (a sequence number)' },
    ]);
  }
  return Number(text);
}
