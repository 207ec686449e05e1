import { fsyncSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';

/** What this module needs of Emscripten's NODEFS inside PGlite's module (the file system on the data directory). */
interface EmscriptenNodeFs {
  stream_ops: { fsync?: (stream: { nfd: number }) => number };
  tryFSOperation<T>(operation: () => T): T;
}

type ModuleOptions = Parameters<NodeFS['init']>[1];

/**
 * PGlite's file system on Node (Emscripten's NODEFS over the data directory), with fsync. NODEFS has
 * no fsync of its own: PostgreSQL's fsync() of a file or directory returned success having done
 * nothing. Here it is fsync(2) on the real descriptor, and an error (EIO, EROFS) reaches PostgreSQL,
 * which then fails rather than report a commit it could not make durable. Emscripten's fdatasync()
 * stays a no-op, so PostgreSQL must sync its WAL with fsync() (`wal_sync_method=fsync`, pglite-start.ts).
 */
export class DurableNodeFS extends NodeFS {
  override async init(pg: PGlite, options: ModuleOptions): ReturnType<NodeFS['init']> {
    const { emscriptenOpts } = await super.init(pg, options);
    const preRun = [emscriptenOpts.preRun ?? []].flat();
    const addFsync = (module: { NODEFS: EmscriptenNodeFs }) => {
      const nodefs = module.NODEFS;
      nodefs.stream_ops.fsync = (stream) => {
        nodefs.tryFSOperation(() => fsyncSync(stream.nfd));
        return 0;
      };
    };
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...preRun, addFsync] } };
  }
}
