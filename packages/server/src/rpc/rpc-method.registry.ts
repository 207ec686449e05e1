import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { ExternalContextCreator } from '@nestjs/core/helpers/external-context-creator.js';
import { RPC_HANDLERS, RPC_METHOD, type RpcMethodMetadata } from './rpc-method.metadata.js';
import type { RpcCallContext } from './rpc-context.js';
import { RPC_ARGS_METADATA, rpcParamsFactory } from './rpc-params.pipe.js';

export interface RegisteredRpcMethod extends RpcMethodMetadata {
  /**
   * Runs the handler through its Nest pipeline (guard, params pipe, interceptors, exception filter):
   * its result, or the RpcFailure its exception filter made of what was thrown. A closure over the
   * pipeline, so it may be called detached.
   */
  readonly invoke: (params: object, context: RpcCallContext) => Promise<unknown>;
}

/**
 * Every `_cleveragents/*` handler, discovered at bootstrap; a duplicate name fails the boot. Each is
 * wrapped by Nest's ExternalContextCreator, as @nestjs/graphql wraps a resolver: the enhancers its
 * @RpcMethod declares run as they would for a controller's route, whichever transport carried the call.
 */
@Injectable()
export class RpcMethodRegistry implements OnModuleInit {
  private readonly logger = new Logger(RpcMethodRegistry.name);
  private readonly methods = new Map<string, RegisteredRpcMethod>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly contextCreator: ExternalContextCreator,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      const { metatype } = wrapper;
      if (!instance || !metatype || !this.reflector.get<boolean>(RPC_HANDLERS, metatype)) continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const key of this.scanner.getAllMethodNames(prototype)) {
        const fn = (instance as Record<string, unknown>)[key];
        if (typeof fn !== 'function') continue;
        const meta = this.reflector.get<RpcMethodMetadata | undefined>(RPC_METHOD, fn as () => unknown);
        if (!meta) continue;
        const existing = this.methods.get(meta.name);
        if (existing) {
          throw new Error(
            `Duplicate JSON-RPC method "${meta.name}" on ${metatype.name}.${key}; it is already registered`,
          );
        }
        const pipeline = this.contextCreator.create(
          instance,
          fn as (...args: unknown[]) => unknown,
          key,
          RPC_ARGS_METADATA,
          rpcParamsFactory,
          undefined,
          undefined,
          { guards: true, interceptors: true, filters: true },
          'rpc',
        );
        this.methods.set(meta.name, {
          ...meta,
          invoke: (params, context) => pipeline(params, context),
        });
      }
    }
    this.logger.log({ msg: 'extension methods registered', count: this.methods.size });
  }

  get(name: string): RegisteredRpcMethod | undefined {
    return this.methods.get(name);
  }

  /** Every method's declaration, in name order: what the published schemas are made of. */
  declarations(): RpcMethodMetadata[] {
    return this.names().map((name) => {
      const { invoke: _invoke, ...declaration } = this.methods.get(name)!;
      void _invoke;
      return declaration;
    });
  }

  /** Method names, sorted: the list the Agent Card declares. */
  names(): string[] {
    return [...this.methods.keys()].sort();
  }
}
