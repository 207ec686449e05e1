import { Catch, Logger, type ExceptionFilter } from '@nestjs/common';
import { rpcErrorOf, rpcHttpStatusOf, type JsonRpcErrorObject } from './rpc-error.mapper.js';

/** A call that failed, as its handler's pipeline answers it: the JSON-RPC error, and its HTTP status if not 200. */
export class RpcFailure {
  constructor(
    readonly error: JsonRpcErrorObject,
    readonly httpStatus?: number,
  ) {}
}

/**
 * Whatever an `_cleveragents/*` call throws — its guard, its params pipe or its handler — becomes the
 * call's answer: a domain exception its JSON-RPC error (and HTTP status), anything else -32603 with
 * a correlation id. The pipeline returns the RpcFailure instead of a result.
 */
@Catch()
export class RpcExceptionFilter implements ExceptionFilter<unknown> {
  private readonly logger = new Logger(RpcExceptionFilter.name);

  catch(exception: unknown): RpcFailure {
    return new RpcFailure(rpcErrorOf(exception, this.logger), rpcHttpStatusOf(exception));
  }
}
