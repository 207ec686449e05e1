import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

/*
 * The import rules of .dependency-cruiser.cjs, run over packages/: no violation may appear, and each rule
 * is shown to bite on a scratch tree.
 */
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');

/** A violation by rule and ends, as a failure lists it. */
const keyOf = (v: IViolation): string => `${v.rule.name}: ${v.from} -> ${v.to}`;

async function violations(baseDir: string, files: string[]): Promise<IViolation[]> {
  const options = await extractDepcruiseOptions(CONFIG);
  const tsConfig = extractTSConfig(join(baseDir, 'tsconfig.json'));
  const previous = process.cwd();
  process.chdir(baseDir);
  try {
    const { output } = await cruise(
      files,
      { ...options, validate: true, baseDir, tsConfig: { fileName: join(baseDir, 'tsconfig.json') } },
      {},
      { tsConfig },
    );
    return (output as ICruiseResult).summary.violations;
  } finally {
    process.chdir(previous);
  }
}

describe('import rules (dependency-cruiser)', () => {
  it('packages/ breaks no rule', async () => {
    expect((await violations(ROOT, ['packages'])).map(keyOf).sort()).toEqual([]);
  }, 120000);

  describe('each rule bites', () => {
    let tree: string;
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(tree, path)), { recursive: true });
      writeFileSync(join(tree, path), text);
    };

    beforeAll(() => {
      tree = mkdtempSync(join(tmpdir(), 'cleveragents-deps-'));
      symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
      for (const config of ['tsconfig.json', 'tsconfig.base.json']) {
        write(config, readFileSync(join(ROOT, config), 'utf8'));
      }
    });

    afterAll(() => rmSync(tree, { recursive: true, force: true }));

    const rulesBroken = async (files: Record<string, string>): Promise<string[]> => {
      for (const dir of ['packages', 'test']) rmSync(join(tree, dir), { recursive: true, force: true });
      for (const [path, text] of Object.entries(files)) write(path, text);
      return [...new Set((await violations(tree, ['packages'])).map((v) => v.rule.name))].sort();
    };

    it('an import nothing resolves (it would escape every other rule)', async () => {
      expect(
        await rulesBroken({
          'packages/server/src/plan/a.ts': "import { x } from './missing.js';\nexport const a = x;\n",
        }),
      ).toEqual(['resolvable']);
    }, 60000);

    it('two files importing each other', async () => {
      expect(
        await rulesBroken({
          'packages/server/src/plan/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
          'packages/server/src/plan/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
        }),
      ).toEqual(['no-file-cycles']);
    }, 60000);

    it('two folders importing each other, though no file cycle', async () => {
      expect(
        await rulesBroken({
          'packages/server/src/plan/a.ts': "import { c } from '../session/c.js';\nexport const a = c;\n",
          'packages/server/src/plan/b.ts': 'export const b = 1;\n',
          'packages/server/src/session/c.ts': 'export const c = 1;\n',
          'packages/server/src/session/d.ts': "import { b } from '../plan/b.js';\nexport const d = b;\n",
        }),
      ).toEqual(['floors', 'no-folder-cycles']);
    }, 60000);

    it('a folder importing one on a floor above it or beside it; one below it is fine', async () => {
      expect(
        await rulesBroken({
          'packages/server/src/turn/a.ts': "import { p } from '../plan/p.js';\nexport const a = p;\n",
          'packages/server/src/plan/p.ts': 'export const p = 1;\n',
        }),
      ).toEqual(['floors']);
      expect(
        await rulesBroken({
          'packages/server/src/session/s.ts': "import { y } from '../sync/y.js';\nexport const s = y;\n",
          'packages/server/src/sync/y.ts': 'export const y = 1;\n',
        }),
      ).toEqual(['floors']);
      expect(
        await rulesBroken({
          'packages/server/src/common/c.ts': "import { s } from '../rpc/registry.js';\nexport const c = s;\n",
          'packages/server/src/rpc/registry.ts': 'export const s = 1;\n',
        }),
      ).toEqual(['floors']);
      expect(
        await rulesBroken({
          'packages/server/src/plan/p.ts': "import { t } from '../turn/t.js';\nexport const p = t;\n",
          'packages/server/src/turn/t.ts': "import { s } from '../plan-store/s.js';\nexport const t = s;\n",
          'packages/server/src/plan-store/s.ts': "import { q } from '../metrics/q.js';\nexport const s = q;\n",
          'packages/server/src/metrics/q.ts': 'export const q = 1;\n',
        }),
      ).toEqual([]);
    }, 60000);

    it('a domain folder importing the transport; the composition root may', async () => {
      expect(
        await rulesBroken({
          'packages/server/src/a2a/dispatcher.ts': 'export const dispatch = 1;\n',
          'packages/server/src/plan/plan.rpc.ts':
            "import { dispatch } from '../a2a/dispatcher.js';\nexport const p = dispatch;\n",
          'packages/server/src/app.module.ts':
            "import { dispatch } from './a2a/dispatcher.js';\nexport const m = dispatch;\n",
        }),
      ).toEqual(['domain-not-transport', 'floors']);
      expect(
        await rulesBroken({
          'packages/server/src/a2a/dispatcher.ts': 'export const dispatch = 1;\n',
          'packages/server/src/app.module.ts':
            "import { dispatch } from './a2a/dispatcher.js';\nexport const m = dispatch;\n",
        }),
      ).toEqual([]);
    }, 60000);

    it('the contract importing anything but zod, even a Node built-in or a type; itself and zod are fine', async () => {
      for (const text of [
        "import { join } from 'node:path';\nexport const m = join;\n",
        "import { IsString } from 'class-validator';\nexport const m = IsString;\n",
        "import { s } from '@cleveragents/client';\nexport const m = s;\n",
        "export type T = import('@cleveragents/client').S;\n",
      ]) {
        expect(
          await rulesBroken({
            'packages/contract/src/methods.ts': text,
            'packages/client/src/index.ts': 'export const s = 1;\nexport type S = number;\n',
          }),
        ).toEqual(['contract-stands-alone']);
      }
      expect(
        await rulesBroken({
          'packages/contract/src/methods.ts':
            "import type { P } from './parts.js';\nimport { z } from 'zod';\n" +
            "export * from './parts.js';\nexport type M = P;\nexport const s = z.string();\n",
          'packages/contract/src/parts.ts': 'export type P = number;\n',
        }),
      ).toEqual([]);
    }, 60000);

    it('a domain folder importing the HTTP stack; the transport, HTTP auth, the probes and the console may', async () => {
      for (const specifier of ['express', 'body-parser', '@nestjs/platform-express', '@a2a-js/sdk/server/express']) {
        expect(
          await rulesBroken({
            'packages/server/src/plan/plan.service.ts': `import * as http from '${specifier}';\nexport const p = http;\n`,
          }),
        ).toEqual(['http-stack-at-the-boundary']);
      }
      expect(
        await rulesBroken({
          'packages/server/src/auth/http/x.strategy.ts':
            "import type { Request } from 'express';\nexport type R = Request;\n",
          'packages/server/src/health/health.controller.ts':
            "import type { Response } from 'express';\nexport type R = Response;\n",
          'packages/server/src/console/console.controller.ts':
            "import type { Response } from 'express';\nexport type R = Response;\n",
          'packages/server/src/a2a/a2a.controller.ts':
            "import type { Request } from 'express';\nexport type R = Request;\n",
        }),
      ).toEqual([]);
    }, 60000);

    /** The console is outside the tests' TypeScript program: a scratch tree needs one file inside it. */
    const typeCheckedFile = { 'packages/contract/src/x.ts': 'export const x = 1;\n' };

    it('the console importing Node, the server, its stack or the Node entry; the client and contract are fine', async () => {
      expect(
        await rulesBroken({
          'packages/console/src/app.tsx': "import { join } from 'node:path';\nexport const a = join;\n",
          ...typeCheckedFile,
        }),
      ).toEqual(['console-without-node-builtins']);
      expect(
        await rulesBroken({
          'packages/console/src/app.tsx': "import { s } from '../../server/src/s.js';\nexport const a = s;\n",
          'packages/server/src/s.ts': 'export const s = 1;\n',
        }),
      ).toEqual(['console-off-server', 'packages-by-name']);
      expect(
        await rulesBroken({
          'packages/console/src/app.tsx':
            "import { Injectable } from '@nestjs/common';\nexport const a = Injectable;\n",
          ...typeCheckedFile,
        }),
      ).toEqual(['console-in-the-browser']);
      expect(
        await rulesBroken({
          'packages/console/src/app.tsx':
            "import { connect } from '@cleveragents/client';\nexport const a = connect;\n",
          'packages/client/src/index.ts': 'export const connect = 1;\n',
        }),
      ).toEqual([]);
    }, 60000);

    it('the client importing the server or its stack; the contract and its own files are fine', async () => {
      expect(
        await rulesBroken({
          'packages/client/src/lib/a.ts': "import { s } from '../../../server/src/s.js';\nexport const a = s;\n",
          'packages/server/src/s.ts': 'export const s = 1;\n',
        }),
      ).toEqual(['client-off-server', 'packages-by-name']);
      for (const specifier of [
        '@nestjs/common',
        'typeorm',
        'pg',
        '@electric-sql/pglite',
        '@langchain/openai',
        'passport-strategy',
        'express',
        '@a2a-js/sdk/server',
        '@a2a-js/sdk/server/express',
      ]) {
        for (const file of ['packages/client/src/lib/a.ts', 'packages/cli/src/commands/a.ts']) {
          expect(
            await rulesBroken({ [file]: `import * as server from '${specifier}';\nexport const a = server;\n` }),
          ).toContain('client-without-server-packages');
        }
      }
      expect(
        await rulesBroken({
          'packages/client/src/lib/a.ts':
            "import { m } from '@cleveragents/contract';\nimport { b } from './b.js';\nimport { Client } from '@a2a-js/sdk/client';\nexport const a = [m, b, Client];\n",
          'packages/client/src/lib/b.ts': 'export const b = 1;\n',
          'packages/contract/src/index.ts': 'export const m = 1;\n',
        }),
      ).toEqual([]);
    }, 120000);

    it('the CLI importing the server; the client library and the contract are fine', async () => {
      expect(
        await rulesBroken({
          'packages/cli/src/commands/a.ts': "import { s } from '../../../server/src/s.js';\nexport const a = s;\n",
          'packages/server/src/s.ts': 'export const s = 1;\n',
        }),
      ).toEqual(['cli-off-server', 'packages-by-name']);
      expect(
        await rulesBroken({
          'packages/cli/src/commands/a.ts':
            "import { c } from '@cleveragents/client/node';\nimport { m } from '@cleveragents/contract';\nexport const a = [c, m];\n",
          'packages/client/src/node.ts': 'export const c = 1;\n',
          'packages/contract/src/index.ts': 'export const m = 1;\n',
        }),
      ).toEqual([]);
    }, 60000);

    it('the server importing the client library or the CLI', async () => {
      for (const [specifier, file] of [
        ['@cleveragents/client', 'packages/client/src/index.ts'],
        ['@cleveragents/client/node', 'packages/client/src/node.ts'],
      ]) {
        expect(
          await rulesBroken({
            'packages/server/src/plan/a.ts': `import { c } from '${specifier}';\nexport const a = c;\n`,
            [file]: 'export const c = 1;\n',
          }),
        ).toEqual(['server-not-client']);
      }
    }, 60000);

    it("a relative path into another package's files; its name is fine", async () => {
      const contract = { 'packages/contract/src/index.ts': "export * from './reasons.js';\n" };
      const reasons = { 'packages/contract/src/reasons.ts': 'export const r = 1;\n' };
      expect(
        await rulesBroken({
          ...contract,
          ...reasons,
          'packages/server/src/plan/a.ts':
            "import { r } from '../../../contract/src/reasons.js';\nexport const a = r;\n",
        }),
      ).toEqual(['packages-by-name']);
      expect(
        await rulesBroken({
          ...contract,
          ...reasons,
          'packages/server/src/plan/a.ts': "import { r } from '@cleveragents/contract';\nexport const a = r;\n",
        }),
      ).toEqual([]);
    }, 60000);

    it("the client's browser files importing Node or its Node-only files; those files and types are fine", async () => {
      const stdio = {
        'packages/client/src/lib/stdio.ts':
          "import { spawn } from 'node:child_process';\nexport const start = spawn;\nexport type S = number;\n",
      };
      expect(
        await rulesBroken({
          'packages/client/src/lib/a.ts': "import { join } from 'node:path';\nexport const a = join;\n",
        }),
      ).toEqual(['client-browser-without-node']);
      expect(
        await rulesBroken({
          ...stdio,
          'packages/client/src/lib/a.ts': "import { start } from './stdio.js';\nexport const a = start;\n",
        }),
      ).toEqual(['client-browser-off-node-files']);
      expect(
        await rulesBroken({
          ...stdio,
          'packages/client/src/lib/a.ts': "import type { S } from './stdio.js';\nexport type A = S;\n",
          'packages/client/src/node.ts': "import { start } from './lib/stdio.js';\nexport { start };\n",
        }),
      ).toEqual([]);
    }, 60000);

    it('a package importing the tests or the benchmarks (a spec file may)', async () => {
      for (const dir of ['test', 'bench']) {
        expect(
          await rulesBroken({
            'packages/server/src/plan/a.ts': `import { t } from '../../../../${dir}/t.js';\nexport const a = t;\n`,
            [`${dir}/t.ts`]: 'export const t = 1;\n',
          }),
        ).toEqual(['packages-not-tests']);
      }
      expect(
        await rulesBroken({
          'packages/cli/src/a.spec.ts': "import { t } from '../../../test/t.js';\nexport const a = t;\n",
          'test/t.ts': 'export const t = 1;\n',
        }),
      ).toEqual([]);
    }, 60000);
  });
});
