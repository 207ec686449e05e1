import { describe, expect, it } from '@jest/globals';
import { METHOD_SCHEMAS, METHODS } from '../methods.js';
import { violationsOf } from '../wire.js';

describe('the params of a method that takes none (auth/whoami, diagnostics/*)', () => {
  const methods = [METHODS.auth.whoami, METHODS.diagnostics.health, METHODS.diagnostics.info] as const;

  it.each(methods)('%s takes nothing, or namespace alone', (method) => {
    expect(METHOD_SCHEMAS[method].params.safeParse({}).success).toBe(true);
    expect(METHOD_SCHEMAS[method].params.safeParse({ namespace: 'acme' }).success).toBe(true);
  });

  it.each(methods)('%s refuses any other field, naming each', (method) => {
    const parsed = METHOD_SCHEMAS[method].params.safeParse({ namespace: 'acme', planId: 'p', bogus: 1 });
    expect(parsed.success ? [] : violationsOf(parsed.error)).toEqual([
      { field: 'planId', description: 'unknown field' },
      { field: 'bogus', description: 'unknown field' },
    ]);
  });
});
