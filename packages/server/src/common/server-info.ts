import { createRequire } from 'node:module';

const pkg = createRequire(import.meta.url)('../../package.json') as { name: string; version: string };

/** The server's own name and version, read once from package.json (same path from src/ and dist/). */
export const SERVER_NAME = 'CleverAgents Server';
export const SERVER_VERSION: string = pkg.version;
