// Writes the generated methods section of docs/api.md from the built server's @RpcMethod declarations.
// Run through `npm run docs:api` (which builds first); test/contract/api-docs.spec.ts checks the result.
import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';

const docs = new URL('../docs/api.md', import.meta.url);
const dist = new URL('../packages/server/dist/', import.meta.url);
const { declaredMethodsUnder, methodsSection, withMethodsSection } = await import(
  new URL('rpc/api-docs.js', dist).href
);
const methods = await declaredMethodsUnder(dist.pathname, 'js');
writeFileSync(docs, withMethodsSection(readFileSync(docs, 'utf8'), methodsSection(methods)));
console.log(`docs/api.md: ${methods.length} methods`);
