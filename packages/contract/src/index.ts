/**
 * The wire contract the server and the `cleveragents` client both speak: extension method names,
 * their params and results, the data parts of orchestrated tasks, error codes and reasons. Each shape is a
 * zod schema (wire.ts), its only dependency, so either side can use it alone.
 */
export * from './data-parts.js';
export * from './errors.js';
export * from './extension.js';
export * from './methods.js';
export * from './methods/approval.js';
export * from './methods/audit.js';
export * from './methods/auth.js';
export * from './methods/common.js';
export * from './methods/diagnostics.js';
export * from './methods/namespace.js';
export * from './methods/plan.js';
export * from './methods/registry.js';
export * from './methods/session.js';
export * from './methods/sync.js';
export * from './reason-codes.js';
export * from './reasons.js';
export * from './wire.js';
