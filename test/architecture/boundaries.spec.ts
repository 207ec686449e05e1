import { describe, expect, it } from '@jest/globals';
import { checkSource, checkTree } from './source-rules.js';

describe('architecture: nothing bypasses the A2A boundary (ADR-047)', () => {
  it('src/ has no domain module importing the boundary internals, Express or the SDK transport, and no stray routes', () => {
    const { files, violations } = checkTree(process.cwd());
    expect(files).toBeGreaterThan(30);
    expect(violations).toEqual([]);
  });

  describe('the rules catch what they are for', () => {
    it('a domain service importing Express', () => {
      const v = checkSource(
        'src/plan/plan.service.ts',
        "import type { Request } from 'express';\nexport class PlanService {}",
      );
      expect(v.map((x) => x.rule)).toEqual(['no-http-outside-boundary']);
    });

    it('HTTP authentication may read Express requests but not define routes', () => {
      expect(
        checkSource('src/auth/http/x.strategy.ts', "import type { Request } from 'express';\nexport class S {}"),
      ).toEqual([]);
      expect(
        checkSource('src/auth/x.service.ts', "import type { Request } from 'express';").map((x) => x.rule),
      ).toEqual(['no-http-outside-boundary']);
      const route = checkSource(
        'src/auth/http/login.ts',
        "import { Controller, Post } from '@nestjs/common';\n@Controller('login')\nexport class L { @Post() login() {} }",
      );
      expect(route.map((x) => x.rule)).toContain('no-routes-outside-boundary');
    });

    it('a domain module importing the dispatcher', () => {
      const v = checkSource(
        'src/registry/registry.rpc.ts',
        "import { JsonRpcDispatcher } from '../a2a/jsonrpc.dispatcher.js';",
      );
      expect(v).toEqual([
        {
          file: 'src/registry/registry.rpc.ts',
          rule: 'no-boundary-internals',
          detail: 'imports src/a2a/jsonrpc.dispatcher.ts',
        },
      ]);
    });

    it('the handler decorator is the one door a domain module may use', () => {
      expect(
        checkSource('src/registry/registry.rpc.ts', "import { RpcMethod } from '../a2a/rpc-method.decorator.js';"),
      ).toEqual([]);
    });

    it("a domain module using the SDK's server transport", () => {
      const v = checkSource(
        'src/session/session.workflow.ts',
        "import { JsonRpcTransportHandler } from '@a2a-js/sdk/server';",
      );
      expect(v.map((x) => x.rule)).toEqual(['no-sdk-transport-outside-boundary']);
      const express = checkSource('src/session/x.ts', "import { jsonRpcHandler } from '@a2a-js/sdk/server/express';");
      expect(express.map((x) => x.rule).sort()).toEqual([
        'no-http-outside-boundary',
        'no-sdk-transport-outside-boundary',
      ]);
    });

    it('a controller outside src/a2a/ and the probes', () => {
      const v = checkSource(
        'src/namespace/namespace.controller.ts',
        "import { Controller, Get } from '@nestjs/common';\n@Controller('namespaces')\nexport class C { @Get() list() { return []; } }",
      );
      expect(v.map((x) => x.rule)).toEqual(['no-routes-outside-boundary', 'no-routes-outside-boundary']);
    });

    it('probes and the boundary may define routes', () => {
      const src =
        "import { Controller, Get } from '@nestjs/common';\n@Controller()\nexport class C { @Get('x') x() { return 1; } }";
      expect(checkSource('src/health/health.controller.ts', src)).toEqual([]);
      expect(checkSource('src/a2a/a2a.controller.ts', src)).toEqual([]);
    });
  });
});
