import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { EXTENSION_METHOD_NAMES } from '../../packages/contract/src/index.js';
import { RPC_CODES } from '../../packages/contract/src/errors.js';
import { REASON_CODES } from '../../packages/contract/src/reason-codes.js';
import { EVERY_METHOD_REASONS } from '../../packages/server/src/rpc/method-schemas.js';
import {
  declaredMethodsUnder,
  methodsSection,
  methodsSectionOf,
  withMethodsSection,
} from '../../packages/server/src/rpc/api-docs.js';

/*
 * docs/api.md's method list is generated from the @RpcMethod declarations (`npm run docs:api`): a
 * method added or changed without regenerating the page fails here.
 */

const docs = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
const src = new URL('../../packages/server/src/', import.meta.url).pathname;

describe('docs/api.md, generated from the method declarations', () => {
  it('declares every contract method, and nothing else', async () => {
    const methods = await declaredMethodsUnder(src, 'ts');
    expect(methods.map((m) => m.name)).toEqual([...EXTENSION_METHOD_NAMES].sort());
  });

  it('holds exactly the section the declarations generate (run npm run docs:api after changing a method)', async () => {
    const methods = await declaredMethodsUnder(src, 'ts');
    expect(methodsSectionOf(docs)).toEqual(methodsSection(methods));
  });

  it('names every reason any method may answer (the bundle publishes them as everyMethodReasons)', () => {
    const named = EVERY_METHOD_REASONS.filter((reason) => REASON_CODES[reason] !== RPC_CODES.AUTHENTICATION_REQUIRED);
    expect(named.filter((reason) => !docs.includes(`\`${reason}\``))).toEqual([]);
  });

  it('replaces only what lies between the markers', () => {
    const page = `intro\n${methodsSection([])}\noutro\n`;
    expect(withMethodsSection(page, 'NEW')).toBe('intro\nNEW\noutro\n');
  });
});
