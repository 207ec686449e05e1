import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The name of the checkout's root package (the npm workspaces the client is built in). */
const CHECKOUT_PACKAGE = 'cleveragents-workspace';

function packageName(dir: string): string | undefined {
  try {
    const name = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The checkout of CleverAgents this client runs from (its own source tree), found above this file;
 * undefined for a client installed from a package, which has no checkout.
 */
export function ownCheckout(from: string = fileURLToPath(import.meta.url)): string | undefined {
  for (let dir = dirname(from); dirname(dir) !== dir; dir = dirname(dir)) {
    if (packageName(dir) === CHECKOUT_PACKAGE) {
      try {
        return realpathSync(dir);
      } catch {
        return dir;
      }
    }
  }
  return undefined;
}

function within(inner: string, outer: string): boolean {
  return inner.startsWith(outer.endsWith(sep) ? outer : `${outer}${sep}`);
}

/** How a workspace (a real path) stands to the checkout: it is it, lies in it, holds it, or none of these. */
export function relationTo(workspace: string, checkout: string): 'is' | 'lies in' | 'holds' | undefined {
  if (workspace === checkout) return 'is';
  if (within(workspace, checkout)) return 'lies in';
  if (within(checkout, workspace)) return 'holds';
  return undefined;
}
