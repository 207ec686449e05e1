// The embedded database's own thread (pglite-thread.ts starts it): PGlite runs here, so that its start
// and its queries use a core of their own while the server's thread starts and serves requests.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import { copyTemplate } from './embedded-template.js';
import { syncPath, syncTree } from './file-sync.js';
import { startPGlite } from './pglite-start.js';
import type { ThreadReply, ThreadRequest } from './pglite-thread.messages.js';

if (isMainThread || !parentPort) throw new Error('pglite-worker.js runs only as the embedded database thread');
const port = parentPort;
const { pgdata, seedFrom } = workerData as { pgdata: string; seedFrom: string | null };

const post = (reply: ThreadReply, transfer: ArrayBuffer[] = []) => port.postMessage(reply, transfer);
const failure = (error: unknown) =>
  error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };

function serve(pglite: PGlite): void {
  const unlistens = new Map<number, () => Promise<void>>();
  // One request at a time, in the order sent: the protocol bytes of one connection, as on a socket.
  let queue = Promise.resolve();
  const handle = async (request: ThreadRequest): Promise<void> => {
    try {
      switch (request.kind) {
        case 'exec': {
          // Runs the messages and returns what PostgreSQL answered, as bytes. PGlite parses them too: it
          // hands any notification among them to its listeners (below); an error is only answered.
          const { data: bytes } = await pglite.execProtocol(request.bytes, { throwOnError: false });
          post({ kind: 'done', id: request.id, bytes }, [bytes.buffer as ArrayBuffer]);
          return;
        }
        case 'listen': {
          const { listener, channel } = request;
          unlistens.set(
            listener,
            await pglite.listen(channel, (payload) => post({ kind: 'notification', listener, payload })),
          );
          post({ kind: 'done', id: request.id });
          return;
        }
        case 'unlisten': {
          const unlisten = unlistens.get(request.listener);
          unlistens.delete(request.listener);
          await unlisten?.();
          post({ kind: 'done', id: request.id });
          return;
        }
        case 'close': {
          await pglite.close();
          post({ kind: 'done', id: request.id });
          port.close();
          return;
        }
      }
    } catch (error) {
      post({ kind: 'failed', id: request.id, error: failure(error) });
    }
  };
  port.on('message', (request: ThreadRequest) => {
    queue = queue.then(() => handle(request));
  });
}

/**
 * Readies the locked directory: a copy of the build's migrated template when one fits, else empty; returns
 * whether it is fresh. A stale postmaster.pid is removed (docs/design-notes.md#embedded-directory).
 */
function prepareDirectory(): boolean {
  const fresh = seedFrom !== null || !existsSync(join(pgdata, 'PG_VERSION'));
  rmSync(join(pgdata, POSTMASTER_PID), { force: true });
  if (seedFrom) copyTemplate(seedFrom, pgdata);
  else mkdirSync(pgdata, { recursive: true });
  return fresh;
}

const POSTMASTER_PID = 'postmaster.pid';

Promise.resolve()
  .then(async () => {
    const fresh = prepareDirectory();
    const pglite = await startPGlite(pgdata);
    // initdb and a template's copy wrote without fsync, and PostgreSQL syncs only what it writes itself:
    // on disk before a first commit is answered, or a power loss could leave that commit's WAL on nothing.
    if (fresh) {
      syncTree(pgdata);
      syncPath(dirname(dirname(pgdata)));
    }
    return pglite;
  })
  .then(
    (pglite) => {
      serve(pglite);
      post({ kind: 'ready' });
    },
    (error: unknown) => {
      post({ kind: 'start-failed', error: failure(error) });
      port.close();
    },
  );
