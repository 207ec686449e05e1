import { describe, expect, it } from '@jest/globals';
import {
  EXTENSION_METHOD_NAMES,
  METHOD_SCHEMAS,
  METHODS,
  type ExtensionMethodName,
} from '../../packages/contract/src/index.js';

/*
 * Each method's params and result are declared once, as the contract's schemas (METHOD_SCHEMAS): the server
 * validates and publishes them (@RpcMethod takes them by name), the client decodes with them. Here: every
 * method has them, at compile time and at run time.
 */

/** The names a table of schemas leaves out (`never` when it has them all). */
type Missing<Table> = Exclude<ExtensionMethodName, keyof Table>;
const everyMethodDeclared: Missing<typeof METHOD_SCHEMAS> extends never ? true : never = true;

describe('params and results: each method declared once, in the contract', () => {
  it('METHOD_SCHEMAS has the params and result schema of every method of METHODS', () => {
    expect(everyMethodDeclared).toBe(true);
    expect(Object.keys(METHOD_SCHEMAS).sort()).toEqual([...EXTENSION_METHOD_NAMES].sort());
    for (const [name, { params, result }] of Object.entries(METHOD_SCHEMAS)) {
      expect([name, typeof params.safeParse, typeof result.safeParse]).toEqual([name, 'function', 'function']);
    }
  });

  it('the check bites: a table without one method does not type-check', () => {
    const { [METHODS.audit.list]: _left, ...fewer } = METHOD_SCHEMAS;
    void _left;
    // @ts-expect-error -- one method missing: Missing<> is not never
    const declared: Missing<typeof fewer> extends never ? true : never = true;
    expect(Object.keys(fewer).sort()).toEqual(EXTENSION_METHOD_NAMES.filter((n) => n !== METHODS.audit.list).sort());
    expect(declared).toBe(true);
  });
});
