import { describe, expect, it } from '@jest/globals';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { z } from '@cleveragents/contract';
import { Principal, type Role } from '../common/principal.js';
import { AppConfig } from '../config/app.config.js';
import { ConfigModule } from '../config/config.module.js';
import { RpcFailure } from './rpc-exception.filter.js';
import type { Acting } from '../common/actor.js';
import type { StoreScope } from '../database/store-scope.js';
import { ActingAs, CallerScope, CallNamespace, CallPrincipal, RpcHandlers, RpcMethod } from './rpc-method.decorator.js';
import type { RpcCallContext } from './rpc-context.js';
import { RpcMethodRegistry } from './rpc-method.registry.js';

const CONFIG = ConfigModule.forRoot(AppConfig.fromEnv({ NODE_ENV: 'test' }));

function caller(grants: Record<string, Role>): { principal: Principal; transport: 'stdio'; requestId: string } {
  const principal = new Principal({
    subject: 'apikey:k1',
    scheme: 'apiKey',
    defaultNamespace: 'acme',
    grants: new Map(Object.entries(grants)),
  });
  return { principal, transport: 'stdio', requestId: 'r1' };
}

const EchoParams = z.strictObject({ text: z.string() });
type EchoParams = z.infer<typeof EchoParams>;

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

const WhereParams = z.strictObject({ namespace: z.string().optional() });
type WhereParams = z.infer<typeof WhereParams>;

/** Each call decorator, and an unmarked second argument (the call context). */
@RpcHandlers()
class WhereRpc {
  @RpcMethod('_cleveragents/echo/where', { role: 'viewer', params: WhereParams, description: 'where' })
  where(
    params: WhereParams,
    ctx: RpcCallContext,
    @CallerScope() scope: StoreScope,
    @CallNamespace() namespace: string,
    @ActingAs() by: Acting,
    @CallPrincipal() principal: Principal,
  ): object {
    return { params: { ...params }, transport: ctx.transport, scope, namespace, by, same: principal === ctx.principal };
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
      imports: [DiscoveryModule, CONFIG],
      providers: [RpcMethodRegistry, EchoRpc, UnmarkedRpc],
    }).compile();
    await module.init();
    const registry = module.get(RpcMethodRegistry);
    expect(registry.names()).toEqual(['_cleveragents/echo/say']);
    const method = registry.get('_cleveragents/echo/say')!;
    expect(method).toMatchObject({ role: 'member', params: EchoParams, description: 'echo' });
    await expect(method.invoke({ text: 'hi' }, caller({ acme: 'member' }))).resolves.toEqual({ said: 'hi' });
    await module.close();
  });

  it('runs a handler through its pipeline: the role guard first, then the params pipe, errors by the filter', async () => {
    const module = await Test.createTestingModule({
      imports: [DiscoveryModule, CONFIG],
      providers: [RpcMethodRegistry, EchoRpc],
    }).compile();
    await module.init();
    const method = module.get(RpcMethodRegistry).get('_cleveragents/echo/say')!;
    const failure = async (params: object, grants: Record<string, Role>) => {
      const reply = await method.invoke(params, caller(grants));
      expect(reply).toBeInstanceOf(RpcFailure);
      return reply as RpcFailure;
    };
    // No role in the namespace: it is not found, before the params are looked at.
    const hidden = await failure({ text: 1 }, {});
    expect(hidden.error).toMatchObject({ code: -32001, data: [{ reason: 'NAMESPACE_NOT_FOUND' }] });
    // A role too low: -32003 and HTTP 403, before the params are looked at.
    const low = await failure({ text: 1 }, { acme: 'viewer' });
    expect(low.error).toMatchObject({ code: -32003, data: [{ reason: 'ROLE_REQUIRED' }] });
    expect(low.httpStatus).toBe(403);
    // A namespace that is no slug is refused before the role is checked (the answer would name it).
    const slug = await failure({ namespace: 'Not A Slug', text: 'x' }, {});
    expect(slug.error).toMatchObject({ code: -32602 });
    // The role held: the params are validated, unknown fields refused.
    const invalid = await failure({ text: 1, extra: true }, { acme: 'member' });
    expect(invalid.error.code).toBe(-32602);
    expect(invalid.error.data?.[1]).toEqual({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [
        { field: 'text', description: 'Invalid input: expected string, received number' },
        { field: 'extra', description: 'unknown field' },
      ],
    });
    expect(invalid.httpStatus).toBeUndefined();
    await module.close();
  });

  it("gives a handler's marked arguments: the caller's scope and namespace, who it acts as, the principal", async () => {
    const module = await Test.createTestingModule({
      imports: [DiscoveryModule, CONFIG],
      providers: [RpcMethodRegistry, WhereRpc],
    }).compile();
    await module.init();
    const method = module.get(RpcMethodRegistry).get('_cleveragents/echo/where')!;
    const call = caller({ acme: 'viewer', 'acme/dev': 'viewer' });
    const acting = { actor: call.principal, requestId: 'r1' };
    // No namespace in the params: the caller's default one.
    await expect(method.invoke({}, call)).resolves.toEqual({
      params: {},
      transport: 'stdio',
      scope: { namespace: 'acme', owner: call.principal.userName },
      namespace: 'acme',
      by: acting,
      same: true,
    });
    await expect(method.invoke({ namespace: 'acme/dev' }, call)).resolves.toMatchObject({
      scope: { namespace: 'acme/dev', owner: call.principal.userName },
      namespace: 'acme/dev',
    });
    // Invalid params never reach the handler: the params pipe answers -32602 naming the field.
    const refused = (await method.invoke({ namespace: 'acme', extra: 1 }, call)) as RpcFailure;
    expect(refused).toBeInstanceOf(RpcFailure);
    expect(refused.error.data?.[1]).toMatchObject({ fieldViolations: [{ field: 'extra' }] });
    await module.close();
  });

  it('refuses a handler argument past the second that no call decorator marks', () => {
    expect(() => {
      class Unmarked {
        @RpcMethod('_cleveragents/echo/unmarked', { role: 'viewer', description: 'x' })
        unmarked(_params: object, _ctx: RpcCallContext, _scope: StoreScope): object {
          return {};
        }
      }
      return Unmarked;
    }).toThrow(/unmarked: argument 2 has no call decorator/);
  });

  it('fails the boot on a duplicate method name', async () => {
    const module = await Test.createTestingModule({
      imports: [DiscoveryModule, CONFIG],
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
