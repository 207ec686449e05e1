import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { startServer, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The client library as a package: a TypeScript project of its own, outside this repository, with
 * packages/client linked into its node_modules (as `npm install <path>` does), imports `@cleveragents/client`.
 * tsc resolves it through the package's `exports` to the emitted declarations, and node to the built
 * library, which then talks to a real server. (test/client/cli-package.e2e-spec.ts installs packed tarballs.)
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLIENT = join(ROOT, 'packages/client');
const PACKAGE = JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8')) as { name: string };
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

const CONSUMER = `
import { connect, CleverAgentsError, type CleverAgentsClient } from '${PACKAGE.name}';

const client: CleverAgentsClient = await connect({ server: process.argv[2]! });
try {
  const session = await client.sessions.create({ title: 'from the package' });
  const sessionId: string = session.sessionId;
  let code = 0;
  try {
    await client.plans.get({ planId: '01HZZZZZZZZZZZZZZZZZZZZZZZ' });
  } catch (e) {
    if (e instanceof CleverAgentsError) code = e.code;
  }
  console.log(JSON.stringify({ name: client.card.name, offersExtensions: client.offersExtensions, sessionId, code }));
} finally {
  await client.close();
}
`;

/** Wrong on purpose: the declarations must catch both. */
const MISTYPED = `
import { connect } from '${PACKAGE.name}';

const client = await connect({ server: 8080 });
await client.sessions.create({ title: 42 });
`;

describe('the client library as a package (exports "." with types)', () => {
  let db: TestDatabase;
  let server: TestServer;
  let project: string;

  beforeAll(async () => {
    for (const built of ['dist/index.js', 'dist/index.d.ts']) {
      if (!existsSync(join(CLIENT, built))) {
        throw new Error(`packages/client/${built} is missing: run "npm run build" first`);
      }
    }
    project = mkdtempSync(join(tmpdir(), 'cleveragents-consumer-'));
    mkdirSync(join(project, 'node_modules/@types'), { recursive: true });
    mkdirSync(join(project, 'node_modules/@cleveragents'), { recursive: true });
    symlinkSync(CLIENT, join(project, 'node_modules', PACKAGE.name), 'dir');
    symlinkSync(join(ROOT, 'node_modules/@types/node'), join(project, 'node_modules/@types/node'), 'dir');
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    db = await createEmbeddedTestDatabase();
    server = await startServer(db);
  }, 120000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  /** Runs node with `args` in the project (asynchronously: the server answers from this process). */
  function node(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(process.execPath, args, { cwd: project, encoding: 'utf8', timeout: 60000 }, (error, stdout, stderr) =>
        resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
      );
    });
  }

  /** Compiles `source` as the project's only file; tsc's exit code and output. */
  async function compile(name: string, source: string): Promise<{ status: number | null; output: string }> {
    writeFileSync(join(project, `${name}.ts`), source);
    const config = {
      compilerOptions: {
        target: 'ES2023',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        types: ['node'],
        outDir: 'out',
      },
      files: [`${name}.ts`],
    };
    writeFileSync(join(project, `tsconfig.${name}.json`), JSON.stringify(config));
    const run = await node([TSC, '-p', `tsconfig.${name}.json`]);
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  }

  it('a consumer compiles against the emitted types and runs connect() against a real server', async () => {
    const compiled = await compile('consumer', CONSUMER);
    expect(compiled).toEqual({ status: 0, output: '' });
    const run = await node([join(project, 'out/consumer.js'), server.baseUrl]);
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toEqual({
      name: 'CleverAgents Server',
      offersExtensions: true,
      sessionId: expect.stringMatching(/^[0-9A-Z]{26}$/),
      code: -32001,
    });
  }, 120000);

  it('the types are real: a wrong option and a wrong param do not compile', async () => {
    const compiled = await compile('mistyped', MISTYPED);
    expect(compiled.status).not.toBe(0);
    expect(compiled.output).toMatch(
      /mistyped\.ts\(4,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/,
    );
    expect(compiled.output).toMatch(
      /mistyped\.ts\(5,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/,
    );
  }, 120000);
});
