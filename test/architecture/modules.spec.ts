import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { globalModulesIn, projectNewsInModule } from './module-rules.js';

/** The server package: its folders are the server's design (src/, migrations/). */
const ROOT = fileURLToPath(new URL('../../packages/server', import.meta.url));

function moduleFiles(dir = join(ROOT, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return moduleFiles(path);
    return entry.name.endsWith('.module.ts') ? [relative(ROOT, path)] : [];
  });
}

describe('module files build none of the project classes (Nest injects them)', () => {
  it('finds module files to check', () => {
    expect(moduleFiles()).toEqual(expect.arrayContaining(['src/app.module.ts', 'src/auth/auth.module.ts']));
  });

  it('no src/**/*.module.ts `new`s a class of the project', () => {
    const found = moduleFiles().flatMap((file) => projectNewsInModule(file, readFileSync(join(ROOT, file), 'utf8')));
    expect(found).toEqual([]);
  });

  describe('the rule bites', () => {
    const check = (text: string) => projectNewsInModule('src/x/x.module.ts', text).map((n) => n.constructed);

    it('a class imported from a relative path', () => {
      const text = `import { RateLimiter } from './rate-limiter.js';
        export const f = (config) => new RateLimiter(config.rateLimit);`;
      expect(check(text)).toEqual(['RateLimiter']);
    });

    it('a default or namespace import, and a class declared in the module file', () => {
      const text = `import Store from '../store.js';
        import * as backends from './backends.js';
        class Scoped extends Store {}
        export const a = () => [new Store(), new backends.Local(), new Scoped()];`;
      expect(check(text)).toEqual(['Store', 'backends.Local', 'Scoped']);
    });

    it('a class loaded by a dynamic import of the project', () => {
      const text = `export async function f(config) {
          const { LocalActorBackend } = await import('./local/local.backend.js');
          const langgraph = config.langgraph ? await import('./langgraph/langgraph.backend.js') : undefined;
          return [new LocalActorBackend(config), new langgraph.LangGraphActorBackend(config),
            new (await import('./c.js')).C()];
        }`;
      expect(check(text)).toEqual([
        'LocalActorBackend',
        'langgraph.LangGraphActorBackend',
        "(await import('./c.js')).C",
      ]);
    });

    it('external clients and Nest classes may be built', () => {
      const text = `import { Logger } from '@nestjs/common';
        import pg from 'pg';
        import passport from 'passport';
        const { Passport } = await import('passport');
        export const a = () => [new Logger('x'), new pg.Client(), new passport.Passport(), new Passport(), new Map()];`;
      expect(check(text)).toEqual([]);
    });
  });
});

describe('modules import what they use: @Global only for what every module reads', () => {
  const ALLOWED = ['ConfigModule', 'DatabaseModule', 'MetricsModule'];

  it('no other src/**/*.module.ts is @Global', () => {
    const global = moduleFiles().flatMap((file) => globalModulesIn(file, readFileSync(join(ROOT, file), 'utf8')));
    expect(global.sort()).toEqual([...ALLOWED].sort());
  });

  it('the rule bites: @Global() and @common.Global() are found, @Module alone is not', () => {
    const text = `
      import * as common from '@nestjs/common';
      import { Global, Module } from '@nestjs/common';
      @Global() @Module({}) export class AuditModule {}
      @common.Global() @Module({}) export class RegistryModule {}
      @Module({}) export class SyncModule {}`;
    expect(globalModulesIn('src/x/x.module.ts', text)).toEqual(['AuditModule', 'RegistryModule']);
  });
});
