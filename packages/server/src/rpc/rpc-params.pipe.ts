import type { PipeTransform } from '@nestjs/common';
import type { ParamsFactory } from '@nestjs/core/helpers/external-context-creator.js';
import { decode, type WireSchema } from '@cleveragents/contract';
import { ValidationError } from '../common/domain.errors.js';
import { rpcArgumentOf, type RpcCallArgument } from './rpc-call.decorators.js';
import type { RpcCallContext } from './rpc-context.js';

/**
 * Where @RpcMethod records a handler's arguments, as Nest's param decorators do for a controller's:
 * the params (validated by the method's pipe) first, then what the call decorators mark (rpc-call.decorators.ts).
 */
export const RPC_ARGS_METADATA = 'cleveragents:rpc-args';

/** What each argument of a handler is made from: the params, or the call (its `data` says what of it). */
export enum RpcParamtype {
  PARAMS = 0,
  CALL = 1,
}

/** The pipeline is called with `(params, context)`; a call argument (its `data` says which) is resolved from both. */
export const rpcParamsFactory: ParamsFactory = {
  exchangeKeyForValue: (_type: number, data: unknown, args: unknown[]) =>
    data === undefined
      ? args[0]
      : rpcArgumentOf(data as RpcCallArgument, args[0] as { namespace?: unknown }, args[1] as RpcCallContext),
};

/**
 * The params pipe of a method: the params as its schema makes them, or -32602 naming each offending field
 * (unknown fields included).
 */
export function schemaParamsPipe(schema: WireSchema): PipeTransform {
  return {
    transform(params: unknown): unknown {
      const decoded = decode(schema, params);
      if (!decoded.ok) throw new ValidationError(decoded.violations);
      return decoded.value;
    },
  };
}
