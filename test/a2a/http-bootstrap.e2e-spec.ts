import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createEmbeddedTestDatabase, TEST_DEFAULTS, type TestDatabase } from '../support/database.js';
import { freePort } from '../support/server.js';
import { DIST_MAIN } from '../support/stdio-client.js';
import { ifAssigned } from '../support/assigned.js';

interface Started {
  lines: Record<string, unknown>[];
  stderr: string;
  exitCode: number | null;
}

/** Runs `node dist/main.js` until it prints its start line (then stops it) or exits. */
async function start(env: Record<string, string>): Promise<Started> {
  if (!existsSync(DIST_MAIN)) throw new Error(`${DIST_MAIN} is missing: run "npm run build" first`);
  const child = spawn(process.execPath, [DIST_MAIN], {
    env: { PATH: process.env.PATH ?? '', ...TEST_DEFAULTS, CLEVERAGENTS_MIGRATE_ON_START: 'true', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<void>((resolve) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        lines.push({ raw: line });
      }
      if (line.includes('"msg":"listening"')) resolve();
    });
  });
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, 60_000).unref());
  const exitCode = await Promise.race([listening.then(() => null), exited, timeout.then(() => null)]);
  if (child.exitCode === null) {
    child.kill('SIGTERM');
    await exited;
  }
  return { lines, stderr, exitCode };
}

describe('the HTTP server process at start', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createEmbeddedTestDatabase();
  });
  afterAll(async () => {
    await ifAssigned(db)?.cleanup();
  });

  it('bound to every interface, prints the address it bound and warns to terminate TLS in front', async () => {
    const port = await freePort();
    const { lines, stderr } = await start({ ...db.env, HOST: '0.0.0.0', PORT: String(port) });
    const listening = lines.find((l) => l.msg === 'listening');
    expect({ listening, stderr }).toMatchObject({ listening: { address: `http://0.0.0.0:${port}` } });
    const warning = lines.find((l) => l.level === 'warn' && String(l.msg).includes('TLS'));
    expect(warning).toBeDefined();
  }, 90_000);

  it('on loopback prints no TLS warning', async () => {
    const port = await freePort();
    const { lines } = await start({ ...db.env, HOST: '127.0.0.1', PORT: String(port) });
    expect(lines.find((l) => l.msg === 'listening')).toMatchObject({ address: `http://127.0.0.1:${port}` });
    expect(lines.filter((l) => String(l.msg).includes('TLS'))).toEqual([]);
  }, 90_000);

  it('refuses to start in production with an all-zero secret key (exit 2), unless a lab opts out', async () => {
    const port = await freePort();
    const zeroKey = { NODE_ENV: 'production', CLEVERAGENTS_SECRET_KEY: '0'.repeat(64), PORT: String(port) };
    const refused = await start({ ...db.env, ...zeroKey });
    expect({ exitCode: refused.exitCode, stderr: refused.stderr }).toMatchObject({
      exitCode: 2,
      stderr: expect.stringContaining('CLEVERAGENTS_SECRET_KEY: the value is not random'),
    });

    const lab = await start({ ...db.env, ...zeroKey, CLEVERAGENTS_ALLOW_INSECURE: 'true' });
    expect(lab.lines.find((l) => l.msg === 'listening')).toBeDefined();
    expect(lab.lines.find((l) => l.level === 'warn' && l.variable === 'CLEVERAGENTS_SECRET_KEY')).toBeDefined();
  }, 120_000);
});
