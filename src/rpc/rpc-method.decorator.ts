import { SetMetadata, applyDecorators, Injectable } from '@nestjs/common';
import type { Role } from '../auth/principal.js';
import type { ExtensionMethodName, ParamsOf, ResultOf } from '../contract/methods.js';
import type { RpcCallContext } from './rpc-context.js';

export const RPC_HANDLERS = Symbol('cleveragents:rpc-handlers');
export const RPC_METHOD = Symbol('cleveragents:rpc-method');

export type ParamsClass = new () => object;

export interface RpcMethodOptions {
  /** class-validator DTO for `params`; omitted means the method takes no params (an empty object). */
  params?: ParamsClass;
  /**
   * Least namespace role that may call the method, or `authenticated` for any authenticated principal
   * whatever its roles (whoami, diagnostics, listing one's own namespaces).
   */
  role: Role | 'authenticated';
  /**
   * Where the role is checked: `namespace` (default) is `params.namespace`, else the caller's default
   * namespace; `parent` is the parent of `params.namespace` (creating a namespace), a top-level one
   * being checked in the configured default namespace (the installation's administrators).
   */
  scope?: 'namespace' | 'parent';
  /** One line for the Agent Card and the README method list. */
  description: string;
}

export interface RpcMethodMetadata extends RpcMethodOptions {
  name: string;
}

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
 */
export function RpcMethod<Name extends `_cleveragents/${string}`>(
  name: Name,
  options: RpcMethodOptions,
): RpcMethodDecorator<Name> {
  if (!/^_cleveragents\/[a-z][a-zA-Z]*(\/[a-z][a-zA-Z_]*)+$/.test(name)) {
    throw new Error(`Invalid extension method name "${name}": expected _cleveragents/{domain}/{operation}`);
  }
  const decorate = SetMetadata(RPC_METHOD, { name, ...options } satisfies RpcMethodMetadata);
  return (target, key, descriptor) => {
    decorate(target, key, descriptor as TypedPropertyDescriptor<unknown>);
  };
}
