/**
 * A real LangGraph API server (@langchain/langgraph-api's `startServer`, offline, in-memory storage
 * under a temp dir) on a free loopback port, serving test/fixtures/langgraph/graph.mjs as
 * `orchestrator`, test/fixtures/langgraph/protocol-graph.mjs (the orchestrator protocol's custom
 * events, typed interrupts and plan rejection) as `protocol`, and test/fixtures/langgraph/
 * orchestrator-real.mjs (the real orchestrator graph from dist/, over the scripted scenario model) as
 * `orchestrator-real` — once `npm run build` made dist/; an actor runs one with `graphId`.
 *
 *   const langgraph = await startLangGraphServer();
 *   ... new Client({ apiUrl: langgraph.url }) ...
 *   await langgraph.close();
 *
 * It runs in a child process, not in the Jest worker: `startServer` starts run workers that loop
 * forever (`while (true)` with timers, no way to stop them) and keeps its graphs, checkpointer and
 * stream queues in module-level singletons, so in-process it would hold the worker open after the
 * suite and could not be restarted. Killing a child ends all of that.
 */
import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = fileURLToPath(new URL('../fixtures/langgraph/', import.meta.url));
/** The compiled orchestrator graph `orchestrator-real` serves (built by `npm run build`, which `npm test` runs). */
export const COMPILED_ORCHESTRATOR_GRAPH = fileURLToPath(
  new URL('../../packages/server/dist/execution/orchestrator/graph.js', import.meta.url),
);

/** A request the server received, with its W3C trace context headers (null when it had none). */
export interface TracedRequest {
  method: string;
  path: string;
  traceparent: string | null;
  tracestate: string | null;
  baggage: string | null;
}

export interface LangGraphServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  /** Every request it received so far, in order; only when started with `recordTraceHeaders`. */
  tracedRequests(): Promise<TracedRequest[]>;
  close(): Promise<void>;
}

export interface LangGraphServerOptions {
  /** Note the trace context headers of every request (test/fixtures/langgraph/trace-headers-app.mjs). */
  recordTraceHeaders?: boolean;
}

export async function startLangGraphServer(options: LangGraphServerOptions = {}): Promise<LangGraphServer> {
  const cwd = mkdtempSync(join(tmpdir(), 'cleveragents-langgraph-'));
  const graphs = {
    orchestrator: `${join(FIXTURES, 'graph.mjs')}:graph`,
    protocol: `${join(FIXTURES, 'protocol-graph.mjs')}:graph`,
    // Without dist/ the fixture cannot load, and one graph that fails to load stops the whole server.
    ...(existsSync(COMPILED_ORCHESTRATOR_GRAPH)
      ? { 'orchestrator-real': `${join(FIXTURES, 'orchestrator-real.mjs')}:graph` }
      : {}),
  };
  const http = options.recordTraceHeaders ? { app: `${join(FIXTURES, 'trace-headers-app.mjs')}:app` } : undefined;
  const child = fork(join(FIXTURES, 'serve.mjs'), [JSON.stringify({ cwd, graphs, http })], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    // No tracing upload, no API key from the developer's shell, errors only in the log.
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'error', LANGSMITH_TRACING: 'false' },
  });
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));

  const url = await new Promise<string>((resolveUrl, reject) => {
    child.once('message', (message: { url?: string; error?: string }) => {
      if (message.url) resolveUrl(message.url);
      else reject(new Error(`LangGraph test server failed to start: ${message.error}\n${log}`));
    });
    child.once('exit', (code) => reject(new Error(`LangGraph test server exited (${code}) before listening\n${log}`)));
  });

  return {
    url,
    async tracedRequests() {
      if (!options.recordTraceHeaders) throw new Error('started without recordTraceHeaders');
      const response = await fetch(`${url}/_test/trace-headers`);
      const seen = (await response.json()) as TracedRequest[];
      return seen.filter((request) => request.path !== '/ok');
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}
