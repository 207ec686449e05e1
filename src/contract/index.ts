/**
 * The wire contract the server and the `cleveragents` client both speak: extension method names,
 * their params and results, the data parts of orchestrated tasks, error codes and reasons. Plain
 * TypeScript with no imports from outside this folder, so either side can use it alone.
 */
export * from './data-parts.js';
export * from './errors.js';
export * from './extension.js';
export * from './methods.js';
