/**
 * The `cleveragents` client's side of client-side tool calls: files in a confined workspace,
 * commands in terminals (sandboxed by bubblewrap when it works), writes and commands approved by the
 * user. Imports only the wire contract (src/contract/) and npm packages.
 */
export * from './environment.js';
export * from './errors.js';
export * from './runner.js';
export * from './sandbox.js';
export * from './terminal.js';
export * from './workspace.js';
