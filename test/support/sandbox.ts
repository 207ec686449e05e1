import { describe } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Whether the client's command sandbox (bubblewrap) works here, for the suites that run it for real:
 * they skip with the reason when it does not, unless CLEVERAGENTS_TEST_REQUIRE_SANDBOX=1 (CI) makes
 * a missing sandbox a failure.
 */

/** The bubblewrap the real-sandbox tests use (CLEVERAGENTS_TEST_BWRAP, default `bwrap`). */
export const TEST_BWRAP = process.env.CLEVERAGENTS_TEST_BWRAP || 'bwrap';

/** The folder of the Node running the tests: sandboxed commands that run it need it readable (CI's Node 24 is under /var/tmp). */
export const TEST_NODE_DIR = dirname(realpathSync(process.execPath));

const probe = spawnSync(
  TEST_BWRAP,
  ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-all', 'true'],
  { encoding: 'utf8' },
);

/** Why bubblewrap does not work here; undefined when it does. */
export const bwrapMissing =
  probe.error || probe.status !== 0
    ? `bubblewrap (${TEST_BWRAP}) is not available (${(probe.error?.message ?? probe.stderr.trim()) || `exit ${probe.status}`})`
    : undefined;

/** Whether the run requires the sandbox (CI). */
export const requireSandbox = process.env.CLEVERAGENTS_TEST_REQUIRE_SANDBOX === '1';

/** `describe` when the sandbox works here or is required, else `describe.skip` with a warning naming `what`. */
export function describeWithSandbox(what: string): typeof describe | typeof describe.skip {
  if (bwrapMissing && !requireSandbox) {
    console.warn(`SKIPPED: ${what}: ${bwrapMissing}`);
    return describe.skip;
  }
  return describe;
}
