import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'cleveragents-server';

/**
 * The server's version from its own package.json, found by walking up from `from`: the file sits at
 * a different depth under ts-jest (src/) and when built (dist/).
 */
export function readServerVersion(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === PACKAGE_NAME && typeof pkg.version === 'string') return pkg.version;
    }
    if (dirname(dir) === dir) throw new Error(`No package.json named "${PACKAGE_NAME}" above ${from}`);
  }
}

/** Read once per process, at import. */
export const SERVER_VERSION: string = readServerVersion();
