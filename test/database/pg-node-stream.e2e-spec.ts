import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/*
 * src/database/pg-node-stream.ts: pg's socket module loaded at start without Node's fetch (undici), and
 * without a global `navigator` left behind. Each case in a fresh Node process (the built module in dist/):
 * what a process has loaded cannot be unloaded.
 */

const MODULE = fileURLToPath(new URL('../../packages/server/dist/database/pg-node-stream.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `body` (an ES module) in a fresh Node and returns what it printed as JSON. */
function inFreshNode(body: string): Record<string, unknown> {
  if (!existsSync(MODULE)) throw new Error(`${MODULE} is missing: run "npm run build" first (npm test does)`);
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', body], {
    cwd: ROOT,
    env: { PATH: process.env.PATH },
  });
  return JSON.parse(out.toString()) as Record<string, unknown>;
}

const REPORT = `
  const { createRequire } = await import('node:module');
  const net = await import('node:net');
  const require = createRequire(${JSON.stringify(`${ROOT}/`)});
  const pg = (await import('pg')).default;
  const socket = require('pg/lib/stream').getStream(false);
  console.log(JSON.stringify({
    undici: process.moduleLoadList.some((m) => m.includes('undici')),
    navigator: typeof globalThis.navigator,
    nodeSocket: socket instanceof net.Socket,
    client: typeof pg.Client,
  }));
`;

const nodeHasNavigator = inFreshNode(`console.log(JSON.stringify({ has: 'navigator' in globalThis }))`).has === true;

describe('pg loaded after loadPgStreamForNode()', () => {
  it("uses Node's sockets, leaves no navigator behind that Node does not have, and loads no undici", () => {
    const seen = inFreshNode(
      `const { loadPgStreamForNode } = await import(${JSON.stringify(MODULE)}); loadPgStreamForNode();\n${REPORT}`,
    );
    expect(seen).toEqual({
      undici: false,
      navigator: nodeHasNavigator ? 'object' : 'undefined',
      nodeSocket: true,
      client: 'function',
    });
  });

  // What the call avoids, where there is something to avoid: pg alone loads undici on a Node without navigator.
  (nodeHasNavigator ? it.skip : it)('without it, pg alone loads undici on this Node (no global navigator)', () => {
    expect(inFreshNode(REPORT)).toMatchObject({ undici: true, navigator: 'undefined', nodeSocket: true });
  });
});
