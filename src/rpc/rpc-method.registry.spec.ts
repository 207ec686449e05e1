import { describe, expect, it } from '@jest/globals';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { RpcHandlers, RpcMethod } from './rpc-method.decorator.js';
import { RpcMethodRegistry } from './rpc-method.registry.js';

class EchoParams {
  @IsString()
  text!: string;
}

@RpcHandlers()
class EchoRpc {
  @RpcMethod('_cleveragents/echo/say', { role: 'member', params: EchoParams, description: 'echo' })
  say(params: EchoParams): { said: string } {
    return { said: params.text };
  }
}

@RpcHandlers()
class OtherEchoRpc {
  @RpcMethod('_cleveragents/echo/say', { role: 'viewer', description: 'the same name again' })
  say(): object {
    return {};
  }
}

/** A provider without the class marker is not scanned, even with @RpcMethod on a method. */
class UnmarkedRpc {
  @RpcMethod('_cleveragents/echo/hidden', { role: 'viewer', description: 'never registered' })
  hidden(): object {
    return {};
  }
}

describe('RpcMethodRegistry', () => {
  it('discovers marked providers and invokes their handlers', async () => {
    const module = await Test.createTestingModule({
      imports: [DiscoveryModule],
      providers: [RpcMethodRegistry, EchoRpc, UnmarkedRpc],
    }).compile();
    await module.init();
    const registry = module.get(RpcMethodRegistry);
    expect(registry.names()).toEqual(['_cleveragents/echo/say']);
    const method = registry.get('_cleveragents/echo/say')!;
    expect(method).toMatchObject({ role: 'member', params: EchoParams, description: 'echo' });
    const params = Object.assign(new EchoParams(), { text: 'hi' });
    await expect(method.invoke(params, {} as never)).resolves.toEqual({ said: 'hi' });
    await module.close();
  });

  it('fails the boot on a duplicate method name', async () => {
    const module = await Test.createTestingModule({
      imports: [DiscoveryModule],
      providers: [RpcMethodRegistry, EchoRpc, OtherEchoRpc],
    }).compile();
    await expect(module.init()).rejects.toThrow(/Duplicate JSON-RPC method "_cleveragents\/echo\/say"/);
  });

  it('refuses a name outside _cleveragents/{domain}/{operation}', () => {
    expect(() => RpcMethod('_cleveragents/flat' as never, { role: 'viewer', description: 'x' })).toThrow(
      /Invalid extension method name/,
    );
    expect(() => RpcMethod('_cleveragents/Plan/Create' as never, { role: 'viewer', description: 'x' })).toThrow();
  });
});
