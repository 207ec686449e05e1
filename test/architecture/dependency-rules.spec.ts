import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

/*
 * The import rules of .dependency-cruiser.cjs, run over src/: no violation may appear, and each rule
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
  it('src/ breaks no rule', async () => {
    expect((await violations(ROOT, ['src'])).map(keyOf).sort()).toEqual([]);
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
      write('tsconfig.json', readFileSync(join(ROOT, 'tsconfig.json'), 'utf8'));
    });

    afterAll(() => rmSync(tree, { recursive: true, force: true }));

    const rulesBroken = async (files: Record<string, string>): Promise<string[]> => {
      rmSync(join(tree, 'src'), { recursive: true, force: true });
      for (const [path, text] of Object.entries(files)) write(path, text);
      return [...new Set((await violations(tree, ['src'])).map((v) => v.rule.name))].sort();
    };

    it('an import nothing resolves (it would escape every other rule)', async () => {
      expect(
        await rulesBroken({ 'src/plan/a.ts': "import { x } from './missing.js';\nexport const a = x;\n" }),
      ).toEqual(['resolvable']);
    }, 60000);

    it('two files importing each other', async () => {
      expect(
        await rulesBroken({
          'src/plan/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
          'src/plan/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
        }),
      ).toEqual(['no-file-cycles']);
    }, 60000);

    it('two folders importing each other, though no file cycle', async () => {
      expect(
        await rulesBroken({
          'src/plan/a.ts': "import { c } from '../session/c.js';\nexport const a = c;\n",
          'src/plan/b.ts': 'export const b = 1;\n',
          'src/session/c.ts': 'export const c = 1;\n',
          'src/session/d.ts': "import { b } from '../plan/b.js';\nexport const d = b;\n",
        }),
      ).toEqual(['no-folder-cycles']);
    }, 60000);

    it('a domain folder importing the transport; the composition root may', async () => {
      expect(
        await rulesBroken({
          'src/a2a/dispatcher.ts': 'export const dispatch = 1;\n',
          'src/plan/plan.rpc.ts': "import { dispatch } from '../a2a/dispatcher.js';\nexport const p = dispatch;\n",
          'src/app.module.ts': "import { dispatch } from './a2a/dispatcher.js';\nexport const m = dispatch;\n",
        }),
      ).toEqual(['domain-not-transport']);
      expect(
        await rulesBroken({
          'src/a2a/dispatcher.ts': 'export const dispatch = 1;\n',
          'src/app.module.ts': "import { dispatch } from './a2a/dispatcher.js';\nexport const m = dispatch;\n",
        }),
      ).toEqual([]);
    }, 60000);

    it('the contract importing anything, even a Node built-in or a type; the contract itself is fine', async () => {
      for (const text of [
        "import { join } from 'node:path';\nexport const m = join;\n",
        "import { IsString } from 'class-validator';\nexport const m = IsString;\n",
        "import { s } from '../plan/s.js';\nexport const m = s;\n",
        "export type T = import('../plan/s.js').S;\n",
      ]) {
        expect(
          await rulesBroken({
            'src/contract/methods.ts': text,
            'src/plan/s.ts': 'export const s = 1;\nexport type S = number;\n',
          }),
        ).toEqual(['contract-stands-alone']);
      }
      expect(
        await rulesBroken({
          'src/contract/methods.ts':
            "import type { P } from './parts.js';\nexport * from './parts.js';\nexport type M = P;\n",
          'src/contract/parts.ts': 'export type P = number;\n',
        }),
      ).toEqual([]);
    }, 60000);

    it('a domain folder importing the HTTP stack; the transport, HTTP auth and the probes may', async () => {
      for (const specifier of ['express', 'body-parser', '@nestjs/platform-express', '@a2a-js/sdk/server/express']) {
        expect(
          await rulesBroken({
            'src/plan/plan.service.ts': `import * as http from '${specifier}';\nexport const p = http;\n`,
          }),
        ).toEqual(['http-stack-at-the-boundary']);
      }
      expect(
        await rulesBroken({
          'src/auth/http/x.strategy.ts': "import type { Request } from 'express';\nexport type R = Request;\n",
          'src/health/health.controller.ts': "import type { Response } from 'express';\nexport type R = Response;\n",
          'src/a2a/a2a.controller.ts': "import type { Request } from 'express';\nexport type R = Request;\n",
        }),
      ).toEqual([]);
    }, 60000);

    it('the client importing the server or its stack; the contract and its own files are fine', async () => {
      expect(
        await rulesBroken({
          'src/client/lib/a.ts': "import { s } from '../../plan/s.js';\nexport const a = s;\n",
          'src/plan/s.ts': 'export const s = 1;\n',
        }),
      ).toEqual(['client-off-server']);
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
        expect(
          await rulesBroken({
            'src/client/lib/a.ts': `import * as server from '${specifier}';\nexport const a = server;\n`,
          }),
        ).toContain('client-without-server-packages');
      }
      expect(
        await rulesBroken({
          'src/client/lib/a.ts':
            "import { m } from '../../contract/methods.js';\nimport { b } from './b.js';\nimport { Client } from '@a2a-js/sdk/client';\nexport const a = [m, b, Client];\n",
          'src/client/lib/b.ts': 'export const b = 1;\n',
          'src/contract/methods.ts': 'export const m = 1;\n',
        }),
      ).toEqual([]);
    }, 60000);
  });
});
