import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { RpcMethodRegistry } from './rpc-method.registry.js';

/**
 * The `_cleveragents/*` methods of every module, discovered at bootstrap and each wrapped in its Nest
 * pipeline (see RpcMethodRegistry); a transport looks them up by name.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [RpcMethodRegistry],
  exports: [RpcMethodRegistry],
})
export class RpcModule {}
