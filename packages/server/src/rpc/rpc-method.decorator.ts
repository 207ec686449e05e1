import { SetMetadata, applyDecorators, Injectable, UseFilters, UseGuards } from '@nestjs/common';
import type { ExtensionMethodName, ParamsOf, ResultOf } from '@cleveragents/contract';
import type { Reason } from '@cleveragents/contract';
import type { RpcCallContext } from './rpc-context.js';
import type { Schema } from './schemas/json-schema.js';
import { RpcExceptionFilter } from './rpc-exception.filter.js';
import { RPC_HANDLERS, RPC_METHOD, type RpcMethodMetadata, type RpcMethodOptions } from './rpc-method.metadata.js';
import { NoParamsPipe, paramsPipeFor, RPC_ARGS_METADATA, RpcParamtype } from './rpc-params.pipe.js';
import { RpcRoleGuard } from './rpc-role.guard.js';

export {
  RPC_HANDLERS,
  RPC_METHOD,
  type ParamsClass,
  type RpcMethodMetadata,
  type RpcMethodOptions,
} from './rpc-method.metadata.js';

/** Marks a provider whose methods carry @RpcMethod; only marked providers are scanned. */
export function RpcHandlers(): ClassDecorator {
  return applyDecorators(Injectable(), SetMetadata(RPC_HANDLERS, true));
}

/**
 * What a handler of `name` must be: for a method of the contract (src/contract/methods.ts), one that
 * takes its params and answers its result, so that a handler cannot drift from what clients are told.
 */
export type RpcHandlerOf<Name extends string> = Name extends ExtensionMethodName
  ? (params: ParamsOf<Name>, ctx: RpcCallContext) => ResultOf<Name> | Promise<ResultOf<Name>>
  : (params: never, ctx: RpcCallContext) => unknown;

/** What a contract method must declare besides: the schema of its result type, and the reasons it answers. */
export type RpcContractOptions<Name extends string> = [Name] extends [never]
  ? unknown
  : Name extends ExtensionMethodName
    ? { result: Schema<ResultOf<Name>>; errors: readonly Reason[] }
    : unknown;

/** A method decorator that only fits a handler of `Name`. */
export type RpcMethodDecorator<Name extends string> = (
  target: object,
  key: string | symbol,
  descriptor: { value?: RpcHandlerOf<Name> },
) => void;

/**
 * Declares a `_cleveragents/{domain}/{operation}` handler, named from the contract's METHODS. The
 * method receives the validated params instance and the call context, and returns the
 * JSON-serialisable result; both are checked against the contract's types for that name.
 *
 * The one declaration serves routing (the registry), the Agent Card, and the handler's Nest pipeline
 * as a controller's decorators would: RpcRoleGuard checks `role`, the params pipe validates against
 * `params`, RpcExceptionFilter turns what is thrown into the call's JSON-RPC error.
 */
export function RpcMethod<Name extends `_cleveragents/${string}`>(
  name: Name,
  options: RpcMethodOptions & RpcContractOptions<Name>,
): RpcMethodDecorator<Name> {
  if (!/^_cleveragents\/[a-z][a-zA-Z]*(\/[a-z][a-zA-Z_]*)+$/.test(name)) {
    throw new Error(`Invalid extension method name "${name}": expected _cleveragents/{domain}/{operation}`);
  }
  const decorate = applyDecorators(
    SetMetadata(RPC_METHOD, { name, ...options } satisfies RpcMethodMetadata),
    UseGuards(RpcRoleGuard),
    UseFilters(RpcExceptionFilter),
  );
  const paramsPipe = options.params ? paramsPipeFor(options.params) : new NoParamsPipe();
  return (target, key, descriptor) => {
    decorate(target, key, descriptor as TypedPropertyDescriptor<unknown>);
    // As @Body(pipe) and @Req() would record them: (params, context), the params through their pipe.
    Reflect.defineMetadata(
      RPC_ARGS_METADATA,
      {
        [`${RpcParamtype.PARAMS}:0`]: { index: 0, pipes: [paramsPipe] },
        [`${RpcParamtype.CONTEXT}:1`]: { index: 1, pipes: [] },
      },
      target.constructor,
      key,
    );
  };
}
