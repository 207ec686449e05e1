import { describe, expect, it } from '@jest/globals';
import { EXTENSION_METHOD_NAMES } from '../../packages/contract/src/methods.js';
import { fileURLToPath } from 'node:url';
import { checkRpcNames, checkSource, checkTree, rpcHandlersOf, rpcMethodNames } from './source-rules.js';

/** The server package, whose src/ these rules read. */
const SERVER = fileURLToPath(new URL('../../packages/server', import.meta.url));

describe('architecture: nothing bypasses the A2A boundary', () => {
  it('src/ uses the SDK transport only at the boundary, and defines no stray routes (imports: dependency-rules.spec.ts)', () => {
    const { files, violations } = checkTree(SERVER);
    expect(files).toBeGreaterThan(30);
    expect(violations).toEqual([]);
  });

  describe('the rules catch what they are for', () => {
    it('HTTP authentication defines no route either', () => {
      const route = checkSource(
        'src/auth/http/login.ts',
        "import { Controller, Post } from '@nestjs/common';\n@Controller('login')\nexport class L { @Post() login() {} }",
      );
      expect(route.map((x) => x.rule)).toContain('no-routes-outside-boundary');
    });

    it("a domain module using the SDK's server transport", () => {
      const v = checkSource(
        'src/turn/session.workflow.ts',
        "import { JsonRpcTransportHandler } from '@a2a-js/sdk/server';",
      );
      expect(v.map((x) => x.rule)).toEqual(['no-sdk-transport-outside-boundary']);
      const express = checkSource('src/session/x.ts', "import { jsonRpcHandler } from '@a2a-js/sdk/server/express';");
      expect(express.map((x) => x.rule)).toEqual(['no-sdk-transport-outside-boundary']);
    });

    it('a controller outside src/a2a/ and the probes', () => {
      const v = checkSource(
        'src/namespace/namespace.controller.ts',
        "import { Controller, Get } from '@nestjs/common';\n@Controller('namespaces')\nexport class C { @Get() list() { return []; } }",
      );
      expect(v.map((x) => x.rule)).toEqual(['no-routes-outside-boundary', 'no-routes-outside-boundary']);
    });

    it('probes, the console files and the boundary may define routes', () => {
      const src =
        "import { Controller, Get } from '@nestjs/common';\n@Controller()\nexport class C { @Get('x') x() { return 1; } }";
      expect(checkSource('src/health/health.controller.ts', src)).toEqual([]);
      expect(checkSource('src/console/console.controller.ts', src)).toEqual([]);
      expect(checkSource('src/a2a/a2a.controller.ts', src)).toEqual([]);
    });
  });
});

describe('architecture: both sides keep to the wire contract', () => {
  it('every @RpcMethod of src/ is a name of METHODS, and every name of METHODS has exactly one handler', () => {
    const handlers = rpcHandlersOf(SERVER);
    expect(handlers.length).toBe(EXTENSION_METHOD_NAMES.length);
    expect(checkRpcNames(handlers, EXTENSION_METHOD_NAMES)).toEqual({ unknown: [], missing: [], duplicated: [] });
    expect(new Set(handlers.map((h) => h.name))).toEqual(new Set(EXTENSION_METHOD_NAMES));
  });

  describe('the rules catch what they are for', () => {
    it('a handler named outside METHODS, a name handled twice, a name with no handler', () => {
      const names = rpcMethodNames(
        'src/plan/plan.rpc.ts',
        [
          "import { METHODS } from '../contract/methods.js';",
          'class P {',
          "  @RpcMethod(METHODS.plan.get, { role: 'viewer', description: 'x' }) get() {}",
          "  @RpcMethod('_cleveragents/plan/get', { role: 'viewer', description: 'x' }) again() {}",
          "  @RpcMethod('_cleveragents/plan/frobnicate', { role: 'viewer', description: 'x' }) frob() {}",
          "  @RpcMethod(METHODS.plan.nothing, { role: 'viewer', description: 'x' }) none() {}",
          '}',
        ].join('\n'),
      );
      expect(names).toEqual([
        '_cleveragents/plan/get',
        '_cleveragents/plan/get',
        '_cleveragents/plan/frobnicate',
        undefined,
      ]);
      const handlers = names.map((name) => ({ file: 'src/plan/plan.rpc.ts', name }));
      expect(checkRpcNames(handlers, ['_cleveragents/plan/get', '_cleveragents/plan/status'])).toEqual({
        unknown: [
          'src/plan/plan.rpc.ts: _cleveragents/plan/frobnicate',
          'src/plan/plan.rpc.ts: (a name that is not a literal or METHODS.<group>.<name>)',
        ],
        missing: ['_cleveragents/plan/status'],
        duplicated: ['_cleveragents/plan/get'],
      });
    });
  });
});
