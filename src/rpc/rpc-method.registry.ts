import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { RPC_HANDLERS, RPC_METHOD, type RpcMethodMetadata } from './rpc-method.decorator.js';
import type { RpcCallContext } from './rpc-context.js';

export interface RegisteredRpcMethod extends RpcMethodMetadata {
  invoke(params: object, context: RpcCallContext): Promise<unknown>;
}

/** Every `_cleveragents/*` handler, discovered at bootstrap; a duplicate name fails the boot. */
@Injectable()
export class RpcMethodRegistry implements OnModuleInit {
  private readonly logger = new Logger(RpcMethodRegistry.name);
  private readonly methods = new Map<string, RegisteredRpcMethod>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const { instance, metatype } = wrapper;
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
        this.methods.set(meta.name, {
          ...meta,
          invoke: async (params, context) =>
            (fn as (p: object, c: RpcCallContext) => unknown).call(instance, params, context),
        });
      }
    }
    this.logger.log({ msg: 'extension methods registered', count: this.methods.size });
  }

  get(name: string): RegisteredRpcMethod | undefined {
    return this.methods.get(name);
  }

  /** Method names, sorted: the list the Agent Card declares. */
  names(): string[] {
    return [...this.methods.keys()].sort();
  }
}
