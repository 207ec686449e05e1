import { cliHome, type CliHome } from './cli.js';
import { createEmbeddedTestDatabase, type TestDatabase } from './database.js';
import { OpenAiCompatibleEndpoint, type EndpointReply } from './openai-endpoint.js';
import { startServer, type TestServer } from './server.js';
import { assertCliBuilt } from './terminal.js';

/**
 * What a CLI suite runs the built `cleveragents` against: a home of its own, a scripted model, a server on
 * an embedded database (`--server`), and a second embedded data directory for `--local` (one process holds
 * it at a time, so nothing is left open on it).
 */
export interface CliRig {
  home: CliHome;
  model: OpenAiCompatibleEndpoint;
  db: TestDatabase;
  server: TestServer;
  localDb: TestDatabase;
  /** The environment that points a server at the model: the started server's, and a `--local` run's. */
  modelEnv: Record<string, string>;
  /** Closes all of it (what was made, when the setup failed part way). */
  close(): Promise<void>;
}

/** Sets a CliRig up; `envFor` says how a server reaches the model (the local backend by default). */
export async function cliRig(
  reply: EndpointReply,
  envFor: (model: OpenAiCompatibleEndpoint) => Record<string, string> = (model) => ({
    CLEVERAGENTS_ACTOR_BACKEND: 'local',
    CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
    CLEVERAGENTS_MODEL: 'cli-rig',
  }),
): Promise<CliRig> {
  assertCliBuilt();
  const made: { close(): Promise<void> }[] = [];
  const kept = <T extends { close(): Promise<void> }>(part: T): T => (made.unshift(part), part);
  const close = async (): Promise<void> => {
    for (const part of made.splice(0)) await part.close();
  };
  try {
    const home = await cliHome();
    kept({ close: () => home.cleanup() });
    const model = kept(await OpenAiCompatibleEndpoint.start(reply));
    const modelEnv = envFor(model);
    const db = await createEmbeddedTestDatabase();
    kept({ close: () => db.cleanup() });
    const server = kept(await startServer(db, modelEnv));
    const localDb = await createEmbeddedTestDatabase();
    kept({ close: () => localDb.cleanup() });
    return { home, model, db, server, localDb, modelEnv, close };
  } catch (err) {
    await close();
    throw err;
  }
}
