import type { PullResult, RegistryKind, SyncChange } from '../../contract/index.js';
import {
  contentHash,
  forgetEntry,
  keyOf,
  localChanges,
  readEntryFile,
  storeEntry,
  writeState,
  type EntryContent,
  type FolderState,
  type LocalChange,
} from './folder.js';

/** `sync/pull` of one page, as the client library offers it. */
export type PullPage = (cursor: number) => Promise<PullResult>;

/** What a pull did to one entry of the folder. */
export interface PulledEntry {
  kind: RegistryKind;
  name: string;
  file: string;
  /** `conflict`: the server changed an entry the folder changed too; the local file was kept. */
  action: 'added' | 'updated' | 'deleted' | 'conflict';
  revision: number;
  /** For a conflict: what the folder holds and what the server did. */
  local?: LocalChange['state'];
  server?: SyncChange['op'];
}

export interface PullOutcome {
  cursor: number;
  entries: PulledEntry[];
}

/** The content of an entry as a pulled change carries it. */
export function contentOf(entity: { spec: Record<string, unknown>; labels: Record<string, string> }): EntryContent {
  return { spec: entity.spec, labels: entity.labels };
}

/**
 * Applies the server's changes after the folder's cursor, page by page, saving the state after each
 * page. A file changed locally (or created, or deleted) is never written over or removed: the change
 * is reported as a conflict and the entry keeps its base revision, so a push meets the conflict too.
 * A server change that leaves the entry as the folder already has it is simply taken.
 */
export async function pullInto(dir: string, state: FolderState, page: PullPage): Promise<PullOutcome> {
  const dirty = new Map((await localChanges(dir, state)).map((change) => [keyOf(change), change]));
  const reported = new Map<string, PulledEntry>();
  const present = new Map<string, boolean>();
  for (;;) {
    const result = await page(state.cursor);
    for (const change of result.changes) {
      const key = keyOf(change);
      const file = `${key}.yaml`;
      const local = dirty.get(key);
      if (local) {
        const reading = await readEntryFile(dir, change);
        const converged =
          change.op === 'delete'
            ? reading === undefined
            : reading !== undefined && 'hash' in reading && change.entity !== undefined && sameContent(reading, change);
        if (!converged) {
          reported.set(key, {
            kind: change.kind,
            name: change.name,
            file,
            action: 'conflict',
            revision: change.revision,
            local: local.state,
            server: change.op,
          });
          continue;
        }
        dirty.delete(key);
      }
      // What the folder had before this pull decides the word: a name deleted and made again is updated.
      if (!present.has(key)) present.set(key, Object.hasOwn(state.entries, key));
      const had = present.get(key)!;
      if (change.op === 'delete') {
        await forgetEntry(dir, state, change);
      } else {
        await storeEntry(dir, state, change, contentOf(change.entity!), change.revision);
      }
      if (change.op === 'delete' && !had) {
        reported.delete(key);
        continue;
      }
      const action = change.op === 'delete' ? 'deleted' : had ? 'updated' : 'added';
      reported.set(key, { kind: change.kind, name: change.name, file, action, revision: change.revision });
    }
    state.cursor = result.cursor;
    await writeState(dir, state);
    if (!result.hasMore) break;
  }
  return { cursor: state.cursor, entries: [...reported.values()] };
}

function sameContent(reading: { hash: string }, change: SyncChange): boolean {
  return reading.hash === contentHash(contentOf(change.entity!));
}
