import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { startProcess, type ServerProcess, stopAll } from '../support/server-process.js';

/*
 * A misspelt setting is ignored by the schema; the server (node dist/main.js) names it once at start,
 * with the setting that was meant (docs/configuration.md). A clean environment gets no such line.
 */

/** The JSON log lines of a server's output. */
function logLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('unknown CLEVERAGENTS_* and OIDC_* variables at start', () => {
  let db: TestDatabase | undefined;
  const started: ServerProcess[] = [];

  beforeAll(async () => {
    db = await createEmbeddedTestDatabase();
  });

  afterAll(async () => {
    await stopAll(started);
    await db?.cleanup();
  });

  async function start(extra: Record<string, string>): Promise<ServerProcess> {
    if (!db) throw new Error('no database');
    const server = await startProcess({
      ...db.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      CLEVERAGENTS_AUTH_SCHEMES: 'none',
      CLEVERAGENTS_ACTOR_BACKEND: 'conformance',
      ...extra,
    });
    started.push(server);
    return server;
  }

  /** What the server wrote up to now (it is ready: start-up is over), then stops it. */
  async function stop(server: ServerProcess): Promise<string> {
    const log = server.log();
    server.process.kill('SIGTERM');
    await server.exited;
    return log;
  }

  it('warns once for each, naming the closest setting and never the value', async () => {
    const server = await start({
      CLEVERAGENTS_MODEL_BASEURL: 'http://llm.internal:8000/v1',
      OIDC_ISSUER: 'https://sso.example.com/realms/acme',
      CLEVERAGENTS_FAVOURITE_COLOUR: 'sk-not-to-be-echoed',
      // The command-line client's variables, often exported in the same shell: not warned of.
      CLEVERAGENTS_API_KEY: 'ca_client_key',
    });
    const log = await stop(server);
    const warnings = logLines(log).filter((line) => /is not a setting/.test(String(line.msg)));
    expect(warnings.map((line) => [line.level, line.msg])).toEqual([
      [
        'warn',
        'CLEVERAGENTS_FAVOURITE_COLOUR is not a setting and is ignored (the settings are listed in docs/configuration.md)',
      ],
      ['warn', 'CLEVERAGENTS_MODEL_BASEURL is not a setting and is ignored: did you mean CLEVERAGENTS_MODEL_BASE_URL?'],
      ['warn', 'OIDC_ISSUER is not a setting and is ignored: did you mean OIDC_ISSUER_URL?'],
    ]);
    expect(warnings[1]).toMatchObject({
      variable: 'CLEVERAGENTS_MODEL_BASEURL',
      suggestion: 'CLEVERAGENTS_MODEL_BASE_URL',
    });
    expect(log).not.toContain('sk-not-to-be-echoed');
    expect(log).not.toContain('llm.internal');
  }, 90_000);

  it('says nothing of the kind for a clean environment', async () => {
    const server = await start({ CLEVERAGENTS_DEFAULT_NAMESPACE: 'acme' });
    const log = await stop(server);
    expect(logLines(log).some((line) => String(line.msg).startsWith('listening'))).toBe(true);
    expect(log).not.toMatch(/is not a setting/);
  }, 90_000);
});
