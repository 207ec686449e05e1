import { Injectable, Logger } from '@nestjs/common';
import { A2aOperationNotFoundError, ValidationError } from '../common/domain.errors.js';
import { echoPrefix } from '../common/input-limits.js';
import type { RpcCallContext } from '../rpc/rpc-context.js';
import { rpcErrorOf, rpcHttpStatusOf } from '../rpc/rpc-error.mapper.js';
import { RpcFailure } from '../rpc/rpc-exception.filter.js';
import { RpcMethodRegistry } from '../rpc/rpc-method.registry.js';
import { errorOutcome, type DispatchOutcome, type InboundCall, type JsonRpcId } from './jsonrpc.types.js';

/**
 * Calls an `_cleveragents/*` method: finds its handler, hands it the params as a named-params object
 * (snake_case keys accepted), and answers what the handler's Nest pipeline (role guard, params pipe,
 * handler, exception filter; see RpcMethodRegistry) returns.
 */
@Injectable()
export class ExtensionInvoker {
  private readonly logger = new Logger(ExtensionInvoker.name);

  constructor(private readonly registry: RpcMethodRegistry) {}

  /** Whether `name` is a method served here (metrics and logs label calls by it). */
  serves(name: string): boolean {
    return this.registry.get(name) !== undefined;
  }

  async invoke(name: string, rawParams: unknown, id: JsonRpcId, call: InboundCall): Promise<DispatchOutcome> {
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
      const context: RpcCallContext = {
        principal: call.principal,
        transport: call.transport,
        requestId: call.requestId,
      };
      const result = await method.invoke(params, context);
      if (result instanceof RpcFailure) return errorOutcome(id, result.error, {}, result.httpStatus);
      return { kind: 'single', response: { jsonrpc: '2.0', id, result: result ?? {} }, headers: {} };
    } catch (err) {
      return errorOutcome(id, rpcErrorOf(err, this.logger), {}, rpcHttpStatusOf(err));
    }
  }
}

/** A2A JSON is camelCase; top-level snake_case keys (`plan_id`) are accepted as aliases (docs/protocol.md §6). */
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
