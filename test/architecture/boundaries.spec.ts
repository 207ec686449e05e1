import { describe, expect, it } from '@jest/globals';
import { EXTENSION_METHOD_NAMES } from '../../src/contract/methods.js';
import { checkRpcNames, checkSource, checkTree, rpcHandlersOf, rpcMethodNames } from './source-rules.js';

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
        'src/turn/session.workflow.ts',
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

describe('architecture: the wire contract stands alone and both sides keep to it', () => {
  it('src/contract/ and src/client/ import only what they may', () => {
    const { violations } = checkTree(process.cwd());
    expect(violations.filter((v) => v.rule.startsWith('contract-') || v.rule.startsWith('client-'))).toEqual([]);
  });

  it('every @RpcMethod of src/ is a name of METHODS, and every name of METHODS has exactly one handler', () => {
    const handlers = rpcHandlersOf(process.cwd());
    expect(handlers.length).toBe(EXTENSION_METHOD_NAMES.length);
    expect(checkRpcNames(handlers, EXTENSION_METHOD_NAMES)).toEqual({ unknown: [], missing: [], duplicated: [] });
    expect(new Set(handlers.map((h) => h.name))).toEqual(new Set(EXTENSION_METHOD_NAMES));
  });

  describe('the rules catch what they are for', () => {
    it('a contract file importing another part of the server, an npm package or a Node built-in', () => {
      const v = checkSource(
        'src/contract/methods/plan.ts',
        [
          "import type { PlanView } from '../../plan/plan.rows.js';",
          "import { IsString } from 'class-validator';",
          "import { randomUUID } from 'node:crypto';",
          "export type T = import('../../session/session.entity.js').SessionBudget;",
        ].join('\n'),
      );
      expect(v.map((x) => [x.rule, x.detail])).toEqual([
        ['contract-imports-only-contract', 'imports ../../plan/plan.rows.js'],
        ['contract-imports-only-contract', 'imports class-validator'],
        ['contract-imports-only-contract', 'imports node:crypto'],
        ['contract-imports-only-contract', 'imports ../../session/session.entity.js'],
      ]);
    });

    it('a contract file importing the contract', () => {
      expect(
        checkSource(
          'src/contract/methods/plan.ts',
          "import type { PlanEntry } from '../data-parts.js';\nexport * from './common.js';",
        ),
      ).toEqual([]);
    });

    it('a client file importing the server, its stack or the SDK server', () => {
      const v = checkSource(
        'src/client/plans.ts',
        [
          "import { PlanService } from '../plan/plan.service.js';",
          "import { Injectable } from '@nestjs/common';",
          "import { DataSource } from 'typeorm';",
          "import { Pool } from 'pg';",
          "import { PGlite } from '@electric-sql/pglite';",
          "import { ChatOpenAI } from '@langchain/openai';",
          "import passport from 'passport-strategy';",
          "import express from 'express';",
          "import { DefaultRequestHandler } from '@a2a-js/sdk/server';",
          "import { jsonRpcHandler } from '@a2a-js/sdk/server/express';",
        ].join('\n'),
      );
      expect(v.filter((x) => x.rule.startsWith('client-')).map((x) => [x.rule, x.detail])).toEqual([
        ['client-imports-client-or-contract', 'imports src/plan/plan.service.ts'],
        ['client-no-server-packages', 'imports @nestjs/common'],
        ['client-no-server-packages', 'imports typeorm'],
        ['client-no-server-packages', 'imports pg'],
        ['client-no-server-packages', 'imports @electric-sql/pglite'],
        ['client-no-server-packages', 'imports @langchain/openai'],
        ['client-no-server-packages', 'imports passport-strategy'],
        ['client-no-server-packages', 'imports express'],
        ['client-no-server-packages', 'imports @a2a-js/sdk/server'],
        ['client-no-server-packages', 'imports @a2a-js/sdk/server/express'],
      ]);
    });

    it('a client file importing itself, the contract, the SDK client and other packages', () => {
      const v = checkSource(
        'src/client/plans.ts',
        [
          "import { METHODS } from '../contract/index.js';",
          "import { Transport } from './transport.js';",
          "import { ClientFactory } from '@a2a-js/sdk/client';",
          "import type { Task } from '@a2a-js/sdk';",
          "import { readFile } from 'node:fs/promises';",
        ].join('\n'),
      );
      expect(v).toEqual([]);
    });

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
