import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** The client package's sources (packages/client/src). */
const src = resolve(here, '..');

/** Every module specifier a file imports or re-exports. */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\('([^']+)'\)/g)].flatMap(
    (m) => m.at(1) ?? m.at(2) ?? [],
  );
}

/**
 * What a client module may import: node builtins, the SDK's client side, the contract, the OpenTelemetry API
 * (browser-safe, a no-op without an SDK) and the client itself.
 */
export function forbiddenImport(file: string, specifier: string): boolean {
  if (specifier.startsWith('node:')) return false;
  if (specifier === '@a2a-js/sdk' || specifier === '@a2a-js/sdk/client') return false;
  if (specifier === '@cleveragents/contract' || specifier === '@opentelemetry/api') return false;
  if (!specifier.startsWith('.')) return true;
  return relative(src, resolve(dirname(file), specifier)).startsWith('..');
}

describe('the client library imports nothing of the server', () => {
  it('uses only node:, @a2a-js/sdk(/client), @cleveragents/contract, @opentelemetry/api and its own package', () => {
    const files = readdirSync(here).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'));
    expect(files).toContain('client.ts');
    const bad = files.flatMap((f) =>
      specifiers(join(here, f))
        .filter((s) => forbiddenImport(join(here, f), s))
        .map((s) => `${f}: ${s}`),
    );
    expect(bad).toEqual([]);
  });

  it('would catch a server import', () => {
    const file = join(here, 'client.ts');
    expect(forbiddenImport(file, '../../../server/src/a2a/jsonrpc.dispatcher.js')).toBe(true);
    expect(forbiddenImport(file, '../../../contract/src/index.js')).toBe(true);
    expect(forbiddenImport(file, '@nestjs/common')).toBe(true);
    expect(forbiddenImport(file, '@a2a-js/sdk/server')).toBe(true);
    expect(forbiddenImport(file, '@cleveragents/contract')).toBe(false);
    expect(forbiddenImport(file, '@opentelemetry/api')).toBe(false);
    expect(forbiddenImport(file, '@opentelemetry/sdk-node')).toBe(true);
    expect(forbiddenImport(file, '../conversation/events.js')).toBe(false);
    expect(forbiddenImport(file, './errors.js')).toBe(false);
  });
});
