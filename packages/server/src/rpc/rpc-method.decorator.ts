import { SetMetadata, applyDecorators, Injectable, UseFilters, UseGuards, type PipeTransform } from '@nestjs/common';
import {
  methodSchemasOf,
  NoParamsSchema,
  type ExtensionMethodName,
  type ParsedParamsOf,
  type ResultOf,
} from '@cleveragents/contract';
import type { Reason } from '@cleveragents/contract';
import { RPC_CALL_ARGUMENTS, RpcCallArgument } from './rpc-call.decorators.js';
import { RpcExceptionFilter } from './rpc-exception.filter.js';
import { RPC_HANDLERS, RPC_METHOD, type RpcMethodMetadata, type RpcMethodOptions } from './rpc-method.metadata.js';
import { RPC_ARGS_METADATA, RpcParamtype, schemaParamsPipe } from './rpc-params.pipe.js';
import { RpcRoleGuard } from './rpc-role.guard.js';

export { ActingAs, CallerScope, CallNamespace, CallPrincipal } from './rpc-call.decorators.js';
export { RPC_HANDLERS, RPC_METHOD, type RpcMethodMetadata, type RpcMethodOptions } from './rpc-method.metadata.js';

/** Marks a provider whose methods carry @RpcMethod; only marked providers are scanned. */
export function RpcHandlers(): ClassDecorator {
  return applyDecorators(Injectable(), SetMetadata(RPC_HANDLERS, true));
}

/**
 * What a handler of `name` must be: for a method of the contract (src/contract/methods.ts), one that
 * takes its params and answers its result, so that a handler cannot drift from what clients are told.
 */
export type RpcHandlerOf<Name extends string> = Name extends ExtensionMethodName
  ? (params: ParsedParamsOf<Name>, ...call: never[]) => ResultOf<Name> | Promise<ResultOf<Name>>
  : (params: never, ...call: never[]) => unknown;

/**
 * What a contract method declares besides: the reasons it answers. Its params and result schemas are the
 * contract's (METHOD_SCHEMAS), so giving them here is a type error.
 */
export type RpcContractOptions<Name extends string> = [Name] extends [never]
  ? unknown
  : Name extends ExtensionMethodName
    ? { params?: never; result?: never; errors: readonly Reason[] }
    : unknown;

/** A method decorator that only fits a handler of `Name`. */
export type RpcMethodDecorator<Name extends string> = (
  target: object,
  key: string | symbol,
  descriptor: { value?: RpcHandlerOf<Name> },
) => void;

/**
 * Declares a `_cleveragents/*` handler named from METHODS: params, then the call decorators' arguments;
 * it drives routing, the Agent Card and the Nest pipeline (docs/design-notes.md#rpcmethod).
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
  const paramsPipe = schemaParamsPipe(methodSchemasOf(name)?.params ?? options.params ?? NoParamsSchema);
  return (target, key, descriptor) => {
    decorate(target, key, descriptor as TypedPropertyDescriptor<unknown>);
    // As @Body(pipe) and Nest's param decorators would record them: the params through their pipe, then the rest.
    const args: Record<string, { index: number; data?: RpcCallArgument; pipes: PipeTransform[] }> = {
      [`${RpcParamtype.PARAMS}:0`]: { index: 0, pipes: [paramsPipe] },
    };
    for (const [index, data] of callArgumentsOf(target, key, descriptor.value?.length ?? 0)) {
      args[`${RpcParamtype.CALL}:${index}`] = { index, data, pipes: [] };
    }
    Reflect.defineMetadata(RPC_ARGS_METADATA, args, target.constructor, key);
  };
}

/**
 * The call arguments of a handler by index, as its parameter decorators marked them (parameter decorators
 * run before the method's): an unmarked second argument is the call context, an unmarked later one an error.
 */
function callArgumentsOf(target: object, key: string | symbol, declared: number): Map<number, RpcCallArgument> {
  const marked = (Reflect.getMetadata(RPC_CALL_ARGUMENTS, target, key) ?? {}) as Partial<
    Record<number, RpcCallArgument>
  >;
  const out = new Map<number, RpcCallArgument>();
  const last = Math.max(declared - 1, ...Object.keys(marked).map(Number));
  for (let index = 1; index <= last; index++) {
    const kind = marked[index] ?? (index === 1 ? RpcCallArgument.CONTEXT : undefined);
    if (!kind) {
      throw new Error(`${String(key)}: argument ${index} has no call decorator (@CallerScope, @ActingAs…)`);
    }
    out.set(index, kind);
  }
  return out;
}
