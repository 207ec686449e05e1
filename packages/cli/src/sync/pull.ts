import type { PullResult, RegistryKind, SyncChange } from '@cleveragents/contract';
import {
  contentHash,
  fileOf,
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
import { keyProblem, kindDirectory, MAX_ENTRY_FILES, quoted } from './paths.js';

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

/** The most entries one pull may name (each once, however often it changed): ten folders' worth. */
export const MAX_PULLED_ENTRIES = 10 * MAX_ENTRY_FILES;

/** A pull answer this client refuses: a change naming a path, or a malformed page. Nothing was written. */
export class PulledChangeError extends Error {
  readonly hint = 'nothing was written; the server (or something on the way) sent what no CleverAgents server sends';
  constructor(
    readonly seq: unknown,
    readonly field: string,
    readonly problem: string,
  ) {
    super(`The server's change ${quoted(seq)} is refused: ${field} ${problem}`);
    this.name = 'PulledChangeError';
  }
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Checks one pulled change (after `after`) before any of it becomes a path, a file or a line on the screen. */
function checkChange(change: unknown, after: number): asserts change is SyncChange {
  if (!isMapping(change)) throw new PulledChangeError(undefined, 'change', 'is not an object');
  const { seq, kind, name, op, revision, entity } = change;
  const fail = (field: string, problem: string) => new PulledChangeError(seq, field, problem);
  if (!Number.isSafeInteger(seq) || (seq as number) <= after) throw fail('seq', `must be an integer after ${after}`);
  const bad = keyProblem(kind, name);
  if (bad) throw fail(bad.field, bad.problem);
  if (op !== 'upsert' && op !== 'delete') throw fail('op', `${quoted(op)} must be upsert or delete`);
  if (!Number.isSafeInteger(revision) || (revision as number) < 0) throw fail('revision', 'must be an integer');
  if (op === 'delete') return;
  if (!isMapping(entity)) throw fail('entity', 'must be the entry (an upsert carries it)');
  if (!isMapping(entity.spec)) throw fail('entity.spec', 'must be a mapping');
  if (!isMapping(entity.labels) || Object.values(entity.labels).some((v) => typeof v !== 'string')) {
    throw fail('entity.labels', 'must map label names to strings');
  }
}

/**
 * Every change after the folder's cursor, page by page, each checked; by entry, its last change only.
 * Nothing is written here: a refused change anywhere leaves the folder as it was.
 */
export async function fetchChanges(
  state: FolderState,
  page: PullPage,
): Promise<{ cursor: number; last: Map<string, SyncChange> }> {
  const last = new Map<string, SyncChange>();
  let cursor = state.cursor;
  for (;;) {
    const result = (await page(cursor)) as unknown;
    if (!isMapping(result) || !Array.isArray(result.changes)) {
      throw new PulledChangeError(undefined, 'the page', 'is not a sync/pull answer');
    }
    let seq = cursor;
    for (const change of result.changes as unknown[]) {
      checkChange(change, seq);
      seq = change.seq;
      const key = keyOf(change);
      // Re-inserted so that an entry is reported where it last changed.
      last.delete(key);
      last.set(key, change);
      if (last.size > MAX_PULLED_ENTRIES) {
        throw new PulledChangeError(change.seq, 'the pull', `names more than ${MAX_PULLED_ENTRIES} entries`);
      }
    }
    const next = result.cursor;
    if (!Number.isSafeInteger(next) || (next as number) < seq) {
      throw new PulledChangeError(undefined, 'cursor', `must be an integer, at least ${seq}`);
    }
    // A page that moves nothing on and says more is waiting would be asked again forever.
    if (result.hasMore === true && next === cursor) {
      throw new PulledChangeError(undefined, 'cursor', 'did not move though more changes are waiting');
    }
    cursor = next as number;
    if (result.hasMore !== true) return { cursor, last };
  }
}

/**
 * Applies the server's changes after the folder's cursor: all pages are fetched and checked first (names
 * and kinds against the registry's grammar), then each entry takes its last change, and the state is saved
 * once. A file changed locally (or created, or deleted) is never written over or removed: the change is
 * reported as a conflict and the entry keeps its base revision, so a push meets the conflict too. A server
 * change that leaves the entry as the folder already has it is simply taken.
 */
export async function pullInto(dir: string, state: FolderState, page: PullPage): Promise<PullOutcome> {
  const dirty = new Map((await localChanges(dir, state)).map((change) => [keyOf(change), change]));
  const { cursor, last } = await fetchChanges(state, page);
  // Every kind directory written to is checked before the first write, so a link there stops the pull whole.
  for (const kind of new Set([...last.values()].map((c) => c.kind))) await kindDirectory(dir, kind, false);
  const reported: PulledEntry[] = [];
  for (const [key, change] of last) {
    const { kind, name, revision } = change;
    const file = fileOf(change);
    const local = dirty.get(key);
    if (local) {
      const reading = await readEntryFile(dir, change);
      const converged =
        change.op === 'delete'
          ? reading === undefined
          : reading !== undefined && 'hash' in reading && sameContent(reading, change);
      if (!converged) {
        reported.push({ kind, name, file, action: 'conflict', revision, local: local.state, server: change.op });
        continue;
      }
    }
    // What the folder had before this pull decides the word: a name deleted and made again is updated.
    const had = Object.hasOwn(state.entries, key);
    if (change.op === 'delete') {
      await forgetEntry(dir, state, change);
      if (!had) continue;
    } else {
      await storeEntry(dir, state, change, contentOf(change.entity!), change.revision);
    }
    const action = change.op === 'delete' ? 'deleted' : had ? 'updated' : 'added';
    reported.push({ kind, name, file, action, revision });
  }
  state.cursor = cursor;
  await writeState(dir, state);
  return { cursor: state.cursor, entries: reported };
}

function sameContent(reading: { hash: string }, change: SyncChange): boolean {
  return reading.hash === contentHash(contentOf(change.entity!));
}
