import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';

/** The CLI's tools import only the wire contract, each other, Node and npm packages: never the server. */
describe('client tools: imports', () => {
  const dir = join(process.cwd(), 'packages', 'cli', 'src', 'tools');
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));

  function disallowed(source: string): string[] {
    const specifiers = [...source.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
    return specifiers.filter((s) => {
      if (s.startsWith('./')) return s.slice(2).includes('/');
      if (s.startsWith('../')) return true;
      if (s.startsWith('node:') || builtinModules.includes(s)) return false;
      return s.startsWith('/') || s.startsWith('src/') || s === '@cleveragents/server';
    });
  }

  it('packages/cli/src/tools/ reaches only @cleveragents/contract and npm packages', () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
    const found = files.flatMap((f) => disallowed(readFileSync(join(dir, f), 'utf8')).map((s) => `${f}: ${s}`));
    expect(found).toEqual([]);
  });

  it('the check catches a server import', () => {
    expect(disallowed("import { x } from '../../execution/orchestrator/protocol.js';")).toEqual([
      '../../execution/orchestrator/protocol.js',
    ]);
    expect(disallowed("import { x } from './sub/y.js';\nimport { z } from '@cleveragents/contract';")).toEqual([
      './sub/y.js',
    ]);
    expect(disallowed("import { x } from '../../../contract/src/index.js';")).toEqual([
      '../../../contract/src/index.js',
    ]);
  });
});
